import type { SourceColumn, SourceSchema, SourceTable } from '@replix/engine';
import type { ConnectionPool } from 'mssql';
import { byName } from '../sort-by-name.ts';
import { type MsSqlRow, msSqlQuery, nameParameter } from './mssql-query.ts';

// Views of @schema (indexed views included; SQL Server has no other materialized kind), with
// their columns in the same shape as the table introspector's column query.
const VIEWS_SQL = `
SELECT v.name AS table_name
FROM sys.views AS v
WHERE v.schema_id = SCHEMA_ID(@schema) AND v.is_ms_shipped = 0`;

const VIEW_COLUMNS_SQL = `
SELECT v.name AS table_name, c.name AS column_name, c.column_id,
  CASE WHEN ty.is_user_defined = 1 AND ty.is_assembly_type = 0 THEN bt.name ELSE ty.name END
    AS type_name,
  c.max_length, c.precision, c.scale, c.is_nullable
FROM sys.columns AS c
JOIN sys.views AS v ON v.object_id = c.object_id
JOIN sys.types AS ty ON ty.user_type_id = c.user_type_id
LEFT JOIN sys.types AS bt ON bt.user_type_id = c.system_type_id
WHERE v.schema_id = SCHEMA_ID(@schema) AND v.is_ms_shipped = 0`;

/** The views the catalog rows describe, sorted by name; a view has no keys of its own. */
export function msSqlViewsFromRows(
  viewRows: readonly MsSqlRow[],
  columnsByView: ReadonlyMap<string, readonly SourceColumn[]>,
): NonNullable<SourceSchema['views']> {
  return viewRows
    .map((row): SourceTable => {
      const name = String(row.table_name);
      return {
        name,
        kind: 'view',
        columns: columnsByView.get(name) ?? [],
        primaryKey: [],
        uniqueKeys: [],
        foreignKeys: [],
        estimatedRows: null,
      };
    })
    .sort((a, b) => byName(a.name, b.name));
}

/**
 * Views of `schema`; `columnsByView` groups column rows as the table introspector does, so
 * both map types alike.
 */
export async function introspectMsSqlViews(
  pool: ConnectionPool,
  schema: string,
  columnsByView: (rows: readonly MsSqlRow[]) => ReadonlyMap<string, readonly SourceColumn[]>,
): Promise<NonNullable<SourceSchema['views']>> {
  const parameters = [nameParameter('schema', schema)];
  const [views, columns] = await Promise.all([
    msSqlQuery(pool, VIEWS_SQL, parameters),
    msSqlQuery(pool, VIEW_COLUMNS_SQL, parameters),
  ]);
  return msSqlViewsFromRows(views, columnsByView(columns));
}
