import type { SourceColumn, SourceSchema, SourceTable } from '@replix/engine';
import type { Pool } from 'mysql2/promise';
import { groupBy } from '../group-by.ts';
import { byName } from '../sort-by-name.ts';

type Row = Record<string, unknown>;

// The connection's views with their columns; TABLE_NAME is aliased in lower case, as the
// table introspector does (MySQL 8 and MariaDB differ in the case they report).
const VIEW_COLUMNS_SQL = `
SELECT c.TABLE_NAME AS table_name, c.COLUMN_NAME AS column_name, c.COLUMN_TYPE AS column_type,
  c.IS_NULLABLE AS is_nullable, c.ORDINAL_POSITION AS ordinal_position
FROM information_schema.COLUMNS c
JOIN information_schema.TABLES t
  ON t.TABLE_SCHEMA = c.TABLE_SCHEMA AND t.TABLE_NAME = c.TABLE_NAME
WHERE c.TABLE_SCHEMA = DATABASE() AND t.TABLE_TYPE = 'VIEW'`;

const VIEWS_SQL = `
SELECT TABLE_NAME AS table_name
FROM information_schema.TABLES
WHERE TABLE_SCHEMA = DATABASE() AND TABLE_TYPE = 'VIEW'`;

/**
 * Views of the connection's database (MySQL has no materialized views), each column mapped by
 * `columnOf` (the table introspector's, so both agree). A view has no keys of its own.
 */
export async function introspectMySqlViews(
  pool: Pool,
  columnOf: (row: Row) => SourceColumn,
): Promise<NonNullable<SourceSchema['views']>> {
  const [[viewRows], [columnRows]] = await Promise.all([
    pool.query(VIEWS_SQL),
    pool.query(VIEW_COLUMNS_SQL),
  ]);
  const columnsByView = groupBy(columnRows as Row[], (row) => String(row.table_name));
  return (viewRows as Row[])
    .map((viewRow): SourceTable => {
      const name = String(viewRow.table_name);
      const columns = (columnsByView.get(name) ?? [])
        .sort((a, b) => Number(a.ordinal_position) - Number(b.ordinal_position))
        .map(columnOf);
      return {
        name,
        kind: 'view',
        columns,
        primaryKey: [],
        uniqueKeys: [],
        foreignKeys: [],
        estimatedRows: null,
      };
    })
    .sort((a, b) => byName(a.name, b.name));
}
