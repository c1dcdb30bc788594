import type {
  ForeignKeyRule,
  SourceColumn,
  SourceForeignKey,
  SourceSchema,
  SourceTable,
} from '@replix/engine';
import type { Pool } from 'mysql2/promise';
import { decimalScale } from '../decimal-scale.ts';
import { groupBy } from '../group-by.ts';
import { byName } from '../sort-by-name.ts';
import { precisionField } from '../temporal-precision.ts';
import { mySqlColumnType } from './mysql-types.ts';
import { introspectMySqlViews } from './mysql-view-introspector.ts';

type Row = Record<string, unknown>;

async function rows(pool: Pool, sql: string): Promise<Row[]> {
  const [result] = await pool.query(sql);
  return result as Row[];
}

/** information_schema columns are text, but some servers hand a few of them over as binary. */
function text(value: unknown): string {
  return String(value);
}

// Every query names the connection's database through DATABASE(), so no name is interpolated.
// Columns are aliased in lower case: MySQL 8 and MariaDB differ in the case they report.

const TABLES_SQL = `
SELECT TABLE_NAME AS table_name, TABLE_ROWS AS table_rows
FROM information_schema.TABLES
WHERE TABLE_SCHEMA = DATABASE() AND TABLE_TYPE IN ('BASE TABLE', 'SYSTEM VERSIONED')`;

const COLUMNS_SQL = `
SELECT TABLE_NAME AS table_name, COLUMN_NAME AS column_name, COLUMN_TYPE AS column_type,
  IS_NULLABLE AS is_nullable, ORDINAL_POSITION AS ordinal_position
FROM information_schema.COLUMNS
WHERE TABLE_SCHEMA = DATABASE()`;

// Unique indexes, the primary key among them. Prefix indexes (SUB_PART) and functional indexes
// (no COLUMN_NAME) make no whole-column key, so they are dropped below.
const UNIQUE_INDEXES_SQL = `
SELECT TABLE_NAME AS table_name, INDEX_NAME AS index_name, SEQ_IN_INDEX AS seq,
  COLUMN_NAME AS column_name, SUB_PART AS sub_part
FROM information_schema.STATISTICS
WHERE TABLE_SCHEMA = DATABASE() AND NON_UNIQUE = 0`;

const FOREIGN_KEYS_SQL = `
SELECT k.TABLE_NAME AS table_name, k.CONSTRAINT_NAME AS constraint_name,
  k.ORDINAL_POSITION AS ordinal_position, k.COLUMN_NAME AS column_name,
  k.REFERENCED_TABLE_NAME AS referenced_table, k.REFERENCED_COLUMN_NAME AS referenced_column,
  r.DELETE_RULE AS delete_rule, r.UPDATE_RULE AS update_rule
FROM information_schema.KEY_COLUMN_USAGE k
LEFT JOIN information_schema.REFERENTIAL_CONSTRAINTS r
  ON r.CONSTRAINT_SCHEMA = k.CONSTRAINT_SCHEMA AND r.TABLE_NAME = k.TABLE_NAME
  AND r.CONSTRAINT_NAME = k.CONSTRAINT_NAME
WHERE k.TABLE_SCHEMA = DATABASE() AND k.REFERENCED_TABLE_SCHEMA = DATABASE()
  AND k.REFERENCED_TABLE_NAME IS NOT NULL`;

const FOREIGN_KEY_RULES: ReadonlyMap<string, ForeignKeyRule> = new Map([
  ['CASCADE', 'cascade'],
  ['SET NULL', 'set null'],
  ['SET DEFAULT', 'set default'],
  ['RESTRICT', 'restrict'],
  ['NO ACTION', 'no action'],
]);

/** REFERENTIAL_CONSTRAINTS' rule text as a rule; an unknown one counts as no action. */
function foreignKeyRule(value: unknown): ForeignKeyRule {
  return FOREIGN_KEY_RULES.get(text(value).toUpperCase()) ?? 'no action';
}

// MariaDB's JSON is an alias of LONGTEXT with a json_valid() check; the check is how to tell.
const MARIADB_JSON_CHECKS_SQL = `
SELECT TABLE_NAME AS table_name, CHECK_CLAUSE AS check_clause
FROM information_schema.CHECK_CONSTRAINTS
WHERE CONSTRAINT_SCHEMA = DATABASE()`;

const JSON_VALID_CHECK = /^json_valid\(`((?:[^`]|``)+)`\)$/i;

/** `table` → names of its columns declared JSON (MariaDB only; MySQL has a real JSON type). */
async function mariaDbJsonColumns(pool: Pool): Promise<Map<string, Set<string>>> {
  const result = new Map<string, Set<string>>();
  const [version] = await rows(pool, 'SELECT VERSION() AS version');
  if (!text(version?.version).includes('MariaDB')) return result;
  for (const row of await rows(pool, MARIADB_JSON_CHECKS_SQL)) {
    const match = JSON_VALID_CHECK.exec(text(row.check_clause).trim());
    if (!match) continue;
    const table = text(row.table_name);
    const columns = result.get(table) ?? new Set<string>();
    columns.add(match[1]!.replaceAll('``', '`'));
    result.set(table, columns);
  }
  return result;
}

function column(row: Row, jsonColumns: Set<string> | undefined): SourceColumn {
  const name = text(row.column_name);
  const columnType = text(row.column_type);
  const nullable = text(row.is_nullable) === 'YES';
  if (columnType === 'longtext' && jsonColumns?.has(name)) {
    return { name, type: 'json', nullable, sourceType: 'json' };
  }
  const type = mySqlColumnType(columnType);
  const scale = type === 'decimal' ? decimalScale(columnType) : undefined;
  return scale === undefined
    ? { name, type, nullable, sourceType: columnType, ...precisionField(type, columnType, 0) }
    : { name, type, nullable, sourceType: columnType, scale };
}

const byNumber = (field: string) => (a: Row, b: Row) => Number(a[field]) - Number(b[field]);

/** Base tables of the connection's database, described from information_schema. */
export async function introspectMySql(pool: Pool): Promise<SourceSchema> {
  const [tableRows, columnRows, indexRows, foreignKeyRows, jsonColumns] = await Promise.all([
    rows(pool, TABLES_SQL),
    rows(pool, COLUMNS_SQL),
    rows(pool, UNIQUE_INDEXES_SQL),
    rows(pool, FOREIGN_KEYS_SQL),
    mariaDbJsonColumns(pool),
  ]);
  const tableNames = new Set(tableRows.map((row) => text(row.table_name)));
  const columnsByTable = groupBy(columnRows, (row) => text(row.table_name));
  const indexesByTable = groupBy(indexRows, (row) => text(row.table_name));
  const foreignKeysByTable = groupBy(foreignKeyRows, (row) => text(row.table_name));

  const tables = tableRows.map((tableRow): SourceTable => {
    const name = text(tableRow.table_name);
    const columns = (columnsByTable.get(name) ?? [])
      .sort(byNumber('ordinal_position'))
      .map((row) => column(row, jsonColumns.get(name)));

    let primaryKey: string[] = [];
    const uniqueKeys: string[][] = [];
    const indexes = groupBy(indexesByTable.get(name) ?? [], (row) => text(row.index_name));
    for (const [indexName, parts] of [...indexes].sort(([a], [b]) => byName(a, b))) {
      if (parts.some((part) => part.sub_part !== null || part.column_name === null)) continue;
      const keyColumns = parts.sort(byNumber('seq')).map((part) => text(part.column_name));
      if (indexName === 'PRIMARY') primaryKey = keyColumns;
      else uniqueKeys.push(keyColumns);
    }

    const constraints = groupBy(foreignKeysByTable.get(name) ?? [], (row) =>
      text(row.constraint_name),
    );
    const foreignKeys: SourceForeignKey[] = [];
    for (const [constraintName, parts] of [...constraints].sort(([a], [b]) => byName(a, b))) {
      parts.sort(byNumber('ordinal_position'));
      const referencedTable = text(parts[0]!.referenced_table);
      if (!tableNames.has(referencedTable)) continue;
      foreignKeys.push({
        name: constraintName,
        columns: parts.map((part) => text(part.column_name)),
        referencedTable,
        referencedColumns: parts.map((part) => text(part.referenced_column)),
        onDelete: foreignKeyRule(parts[0]!.delete_rule),
        onUpdate: foreignKeyRule(parts[0]!.update_rule),
      });
    }

    // TABLE_ROWS is InnoDB's estimate; NULL for engines that keep none (and for views).
    const estimate = tableRow.table_rows === null ? Number.NaN : Number(tableRow.table_rows);
    return {
      name,
      columns,
      primaryKey,
      uniqueKeys,
      foreignKeys,
      estimatedRows: Number.isFinite(estimate) && estimate >= 0 ? estimate : null,
    };
  });
  return {
    tables: tables.sort((a, b) => byName(a.name, b.name)),
    // A view's JSON column shows as its LONGTEXT alias on MariaDB: no check marks it there.
    views: await introspectMySqlViews(pool, (row) => column(row, undefined)),
  };
}
