import type {
  ElementType,
  ForeignKeyRule,
  SourceColumn,
  SourceForeignKey,
  SourceSchema,
  SourceTable,
} from '@replix/engine';
import type { Pool } from 'pg';
import { decimalScale } from '../decimal-scale.ts';
import { groupBy } from '../group-by.ts';
import { byName } from '../sort-by-name.ts';
import { precisionField } from '../temporal-precision.ts';
import { postgresColumnType, postgresElementType } from './postgres-types.ts';
import { introspectPostgresViews } from './postgres-view-introspector.ts';

type Row = Record<string, unknown>;

async function rows(pool: Pool, sql: string, schema: string): Promise<Row[]> {
  const result = await pool.query<Row>(sql, [schema]);
  return result.rows;
}

// Base tables: ordinary and partitioned tables, but not the partitions, whose rows the
// partitioned parent already returns. Views, foreign tables and sequences are left out.
const TABLES_SQL = `
SELECT c.relname AS name, c.reltuples::float8 AS reltuples
FROM pg_catalog.pg_class c
JOIN pg_catalog.pg_namespace n ON n.oid = c.relnamespace
WHERE n.nspname = $1 AND c.relkind IN ('r', 'p') AND NOT c.relispartition`;

// A domain is mapped by its base type (one level deep) and adds its own NOT NULL. Enums,
// composites and ranges print user-chosen names, so their kind is fetched to tell them apart.
const COLUMNS_SQL = `
SELECT c.relname AS table_name, a.attname AS name, a.attnum AS position,
  format_type(a.atttypid, a.atttypmod) AS source_type,
  CASE WHEN t.typtype = 'd' THEN format_type(t.typbasetype, t.typtypmod)
    ELSE format_type(a.atttypid, a.atttypmod) END AS base_type,
  bt.typtype AS base_kind,
  et.typtype AS element_kind,
  CASE WHEN et.typtype = 'd' THEN format_type(et.typbasetype, et.typtypmod) END
    AS element_base_type,
  a.attnotnull OR (t.typtype = 'd' AND t.typnotnull) AS not_null
FROM pg_catalog.pg_attribute a
JOIN pg_catalog.pg_class c ON c.oid = a.attrelid
JOIN pg_catalog.pg_namespace n ON n.oid = c.relnamespace
JOIN pg_catalog.pg_type t ON t.oid = a.atttypid
JOIN pg_catalog.pg_type bt ON bt.oid = CASE WHEN t.typtype = 'd' THEN t.typbasetype ELSE t.oid END
LEFT JOIN pg_catalog.pg_type et ON et.oid = bt.typelem AND bt.typcategory = 'A'
WHERE n.nspname = $1 AND c.relkind IN ('r', 'p') AND NOT c.relispartition
  AND a.attnum > 0 AND NOT a.attisdropped`;

// Unique indexes, primary keys and unique constraints among them (each has one). Partial and
// expression indexes make no table-wide key over plain columns; INCLUDE columns are not key.
const UNIQUE_INDEXES_SQL = `
SELECT c.relname AS table_name, ic.relname AS index_name, i.indisprimary AS is_primary,
  k.ord AS position, a.attname AS column_name
FROM pg_catalog.pg_index i
JOIN pg_catalog.pg_class c ON c.oid = i.indrelid
JOIN pg_catalog.pg_namespace n ON n.oid = c.relnamespace
JOIN pg_catalog.pg_class ic ON ic.oid = i.indexrelid
CROSS JOIN LATERAL unnest(i.indkey::int2[]) WITH ORDINALITY AS k(attnum, ord)
JOIN pg_catalog.pg_attribute a ON a.attrelid = i.indrelid AND a.attnum = k.attnum
WHERE n.nspname = $1 AND i.indisunique AND i.indisvalid
  AND i.indpred IS NULL AND i.indexprs IS NULL AND k.ord <= i.indnkeyatts`;

// Foreign keys within the schema. conparentid <> 0 marks the copies PostgreSQL makes for
// partitions; the constraint on the parent is the one that counts. A partition is served as its
// partitioned root (see TABLES_SQL), so a key declared on a partition itself, or referencing
// one, is reported on or to that root; `roots` maps every table to it (pg_partition_root
// needs PostgreSQL 12).
const FOREIGN_KEYS_SQL = `
WITH RECURSIVE roots(relid, root) AS (
  SELECT c.oid, c.oid FROM pg_catalog.pg_class c
  WHERE c.relkind IN ('r', 'p') AND NOT c.relispartition
  UNION ALL
  SELECT i.inhrelid, r.root FROM pg_catalog.pg_inherits i
  JOIN roots r ON r.relid = i.inhparent
  JOIN pg_catalog.pg_class pc ON pc.oid = i.inhrelid AND pc.relispartition
)
SELECT c.relname AS table_name, con.oid AS constraint_id, con.conname AS name,
  rc.relname AS referenced_table,
  k.ord AS position, a.attname AS column_name, ra.attname AS referenced_column,
  con.confdeltype AS delete_rule, con.confupdtype AS update_rule
FROM pg_catalog.pg_constraint con
JOIN roots cr ON cr.relid = con.conrelid
JOIN pg_catalog.pg_class c ON c.oid = cr.root
JOIN pg_catalog.pg_namespace n ON n.oid = c.relnamespace
JOIN roots rr ON rr.relid = con.confrelid
JOIN pg_catalog.pg_class rc ON rc.oid = rr.root
JOIN pg_catalog.pg_namespace rn ON rn.oid = rc.relnamespace
CROSS JOIN LATERAL unnest(con.conkey, con.confkey) WITH ORDINALITY AS k(attnum, refattnum, ord)
JOIN pg_catalog.pg_attribute a ON a.attrelid = con.conrelid AND a.attnum = k.attnum
JOIN pg_catalog.pg_attribute ra ON ra.attrelid = con.confrelid AND ra.attnum = k.refattnum
WHERE con.contype = 'f' AND con.conparentid = 0 AND n.nspname = $1 AND rn.nspname = $1`;

/** pg_constraint's one-letter action codes (confdeltype, confupdtype). */
const FOREIGN_KEY_RULES: Readonly<Record<string, ForeignKeyRule>> = {
  a: 'no action',
  r: 'restrict',
  c: 'cascade',
  n: 'set null',
  d: 'set default',
};

function postgresForeignKeyRule(code: unknown): ForeignKeyRule {
  return FOREIGN_KEY_RULES[String(code)] ?? 'no action';
}

/** Kinds of type whose name says nothing about their values: enum, composite, range, multirange. */
const USER_NAMED_KINDS = new Set(['e', 'c', 'r', 'm']);

/** One column row (see `COLUMNS_SQL`) as a source column; views describe theirs the same way. */
export function postgresColumn(row: Row): SourceColumn {
  const name = String(row.name);
  const sourceType = String(row.source_type);
  const baseType = String(row.base_type);
  const nullable = row.not_null !== true;
  const type = USER_NAMED_KINDS.has(String(row.base_kind))
    ? 'string'
    : postgresColumnType(baseType);
  const scale = type === 'decimal' ? decimalScale(baseType) : undefined;
  if (type === 'array') return { name, type, nullable, sourceType, elementType: elementOf(row) };
  return scale === undefined
    ? { name, type, nullable, sourceType, ...precisionField(type, baseType, 6) }
    : { name, type, nullable, sourceType, scale };
}

/**
 * An array column's element type: by the element's kind and domain base where the row has them
 * (`COLUMNS_SQL`), else by the array type's name (`integer[]`).
 */
function elementOf(row: Row): ElementType {
  if (USER_NAMED_KINDS.has(String(row.element_kind))) return 'string';
  const domainBase = row.element_base_type;
  return postgresElementType(typeof domainBase === 'string' ? domainBase : String(row.base_type));
}

const byPosition = (a: Row, b: Row) => Number(a.position) - Number(b.position);

/** Base tables of `schema`, described from pg_catalog. */
export async function introspectPostgres(pool: Pool, schema: string): Promise<SourceSchema> {
  const [tableRows, columnRows, indexRows, foreignKeyRows] = await Promise.all([
    rows(pool, TABLES_SQL, schema),
    rows(pool, COLUMNS_SQL, schema),
    rows(pool, UNIQUE_INDEXES_SQL, schema),
    rows(pool, FOREIGN_KEYS_SQL, schema),
  ]);
  const tableNames = new Set(tableRows.map((row) => String(row.name)));
  const columnsByTable = groupBy(columnRows, (row) => String(row.table_name));
  const indexesByTable = groupBy(indexRows, (row) => String(row.table_name));
  const foreignKeysByTable = groupBy(foreignKeyRows, (row) => String(row.table_name));

  const tables = tableRows.map((tableRow): SourceTable => {
    const name = String(tableRow.name);
    const columns = (columnsByTable.get(name) ?? []).sort(byPosition).map(postgresColumn);

    let primaryKey: string[] = [];
    const uniqueKeys: string[][] = [];
    const indexes = groupBy(indexesByTable.get(name) ?? [], (row) => String(row.index_name));
    for (const [, parts] of [...indexes].sort(([a], [b]) => byName(a, b))) {
      const keyColumns = parts.sort(byPosition).map((part) => String(part.column_name));
      if (parts[0]!.is_primary === true) primaryKey = keyColumns;
      else uniqueKeys.push(keyColumns);
    }

    // By constraint: partitions of one root may each have a constraint of the same name.
    const constraints = groupBy(foreignKeysByTable.get(name) ?? [], (row) =>
      String(row.constraint_id),
    );
    const foreignKeys: SourceForeignKey[] = [];
    // The same key declared on every partition is one key of the root: the first name wins.
    const seen = new Set<string>();
    const byConstraintName = ([, a]: [string, Row[]], [, b]: [string, Row[]]) =>
      byName(String(a[0]!.name), String(b[0]!.name));
    for (const [, parts] of [...constraints].sort(byConstraintName)) {
      parts.sort(byPosition);
      const referencedTable = String(parts[0]!.referenced_table);
      if (!tableNames.has(referencedTable)) continue;
      const columns = parts.map((part) => String(part.column_name));
      const referencedColumns = parts.map((part) => String(part.referenced_column));
      const shape = JSON.stringify([columns, referencedTable, referencedColumns]);
      if (seen.has(shape)) continue;
      seen.add(shape);
      foreignKeys.push({
        name: String(parts[0]!.name),
        columns,
        referencedTable,
        referencedColumns,
        onDelete: postgresForeignKeyRule(parts[0]!.delete_rule),
        onUpdate: postgresForeignKeyRule(parts[0]!.update_rule),
      });
    }

    // reltuples is -1 for a table never vacuumed or analyzed (PostgreSQL 14+).
    const estimate = Number(tableRow.reltuples);
    return {
      name,
      columns,
      primaryKey,
      uniqueKeys,
      foreignKeys,
      estimatedRows: Number.isFinite(estimate) && estimate >= 0 ? Math.round(estimate) : null,
    };
  });
  return {
    tables: tables.sort((a, b) => byName(a.name, b.name)),
    views: await introspectPostgresViews(pool, schema, postgresColumn),
  };
}
