import type { SourceColumn, SourceSchema, SourceTable } from '@replix/engine';
import type { Pool } from 'pg';
import { groupBy } from '../group-by.ts';
import { byName } from '../sort-by-name.ts';

type Row = Record<string, unknown>;

// Views ('v') and materialized views ('m') of the schema, with their columns described the same
// way as a table's (domains by their base type, user-named kinds as text).
const VIEWS_SQL = `
SELECT c.relname AS name, c.relkind AS kind, c.reltuples::float8 AS reltuples,
  c.relispopulated AS populated
FROM pg_catalog.pg_class c
JOIN pg_catalog.pg_namespace n ON n.oid = c.relnamespace
WHERE n.nspname = $1 AND c.relkind IN ('v', 'm')`;

const VIEW_COLUMNS_SQL = `
SELECT c.relname AS table_name, a.attname AS name, a.attnum AS position,
  format_type(a.atttypid, a.atttypmod) AS source_type,
  CASE WHEN t.typtype = 'd' THEN format_type(t.typbasetype, t.typtypmod)
    ELSE format_type(a.atttypid, a.atttypmod) END AS base_type,
  bt.typtype AS base_kind,
  a.attnotnull OR (t.typtype = 'd' AND t.typnotnull) AS not_null
FROM pg_catalog.pg_attribute a
JOIN pg_catalog.pg_class c ON c.oid = a.attrelid
JOIN pg_catalog.pg_namespace n ON n.oid = c.relnamespace
JOIN pg_catalog.pg_type t ON t.oid = a.atttypid
JOIN pg_catalog.pg_type bt ON bt.oid = CASE WHEN t.typtype = 'd' THEN t.typbasetype ELSE t.oid END
WHERE n.nspname = $1 AND c.relkind IN ('v', 'm') AND a.attnum > 0 AND NOT a.attisdropped`;

/**
 * Views and materialized views of `schema`, each column mapped by `columnOf` (the table
 * introspector's, so both agree). They carry no keys: a view has no primary key or foreign keys
 * of its own, so an instance serves one without AFTER paging or relations.
 */
export async function introspectPostgresViews(
  pool: Pool,
  schema: string,
  columnOf: (row: Row) => SourceColumn,
): Promise<NonNullable<SourceSchema['views']>> {
  const [viewRows, columnRows] = await Promise.all([
    pool.query<Row>(VIEWS_SQL, [schema]).then((result) => result.rows),
    pool.query<Row>(VIEW_COLUMNS_SQL, [schema]).then((result) => result.rows),
  ]);
  const columnsByView = groupBy(columnRows, (row) => String(row.table_name));
  return viewRows
    .map((viewRow): SourceTable => {
      const name = String(viewRow.name);
      const columns = (columnsByView.get(name) ?? [])
        .sort((a, b) => Number(a.position) - Number(b.position))
        .map(columnOf);
      // A plain view keeps no row estimate (reltuples stays 0 or -1); a materialized one does.
      const estimate = Number(viewRow.reltuples);
      const kind = viewRow.kind === 'm' ? 'materialized_view' : 'view';
      return {
        name,
        kind,
        ...(viewRow.populated === false ? { populated: false } : {}),
        columns,
        primaryKey: [],
        uniqueKeys: [],
        foreignKeys: [],
        estimatedRows:
          kind === 'materialized_view' && Number.isFinite(estimate) && estimate >= 0
            ? Math.round(estimate)
            : null,
      };
    })
    .sort((a, b) => byName(a.name, b.name));
}
