import type { SourceColumn, SourceForeignKey, SourceSchema, SourceTable } from '@replix/engine';
import type { ConnectionPool } from 'mssql';
import { groupBy } from '../group-by.ts';
import { byName } from '../sort-by-name.ts';
import { precisionField } from '../temporal-precision.ts';
import { type MsSqlRow, msSqlQuery, nameParameter } from './mssql-query.ts';
import { msSqlColumnType, msSqlSourceType } from './mssql-types.ts';
import { introspectMsSqlViews } from './mssql-view-introspector.ts';

// Every query takes the schema as the parameter @schema. Base tables are sys.tables without
// the ones SQL Server ships itself (is_ms_shipped), such as the dbo.systranschemas table that
// enabling CDC creates; views, synonyms and table types are not in sys.tables at all.

const TABLES_SQL = `
SELECT t.name AS table_name,
  (SELECT SUM(p.rows) FROM sys.partitions AS p
    WHERE p.object_id = t.object_id AND p.index_id IN (0, 1)) AS estimated_rows
FROM sys.tables AS t
WHERE t.schema_id = SCHEMA_ID(@schema) AND t.is_ms_shipped = 0`;

/**
 * Columns with their system type: an alias type (CREATE TYPE … FROM varchar(20)) is described
 * by the type it is based on, with that type's length, precision and scale, which sys.columns
 * already holds. CLR types (hierarchyid, geometry, geography) keep their own names.
 */
export function msSqlColumnsSql(tableCount?: number): string {
  const only =
    tableCount === undefined
      ? ''
      : `\n  AND t.name IN (${Array.from({ length: tableCount }, (_, i) => `@t${i}`).join(', ')})`;
  return `
SELECT t.name AS table_name, c.name AS column_name, c.column_id,
  CASE WHEN ty.is_user_defined = 1 AND ty.is_assembly_type = 0 THEN bt.name ELSE ty.name END
    AS type_name,
  c.max_length, c.precision, c.scale, c.is_nullable
FROM sys.columns AS c
JOIN sys.tables AS t ON t.object_id = c.object_id
JOIN sys.types AS ty ON ty.user_type_id = c.user_type_id
LEFT JOIN sys.types AS bt ON bt.user_type_id = c.system_type_id
WHERE t.schema_id = SCHEMA_ID(@schema) AND t.is_ms_shipped = 0${only}`;
}

// Unique indexes, the primary key and unique constraints among them. A filtered index (WHERE
// clause) makes no table-wide key, a disabled one enforces nothing, and INCLUDE columns
// (key_ordinal 0) are not part of the key.
const UNIQUE_INDEXES_SQL = `
SELECT t.name AS table_name, i.name AS index_name, i.is_primary_key, ic.key_ordinal,
  c.name AS column_name
FROM sys.indexes AS i
JOIN sys.tables AS t ON t.object_id = i.object_id
JOIN sys.index_columns AS ic ON ic.object_id = i.object_id AND ic.index_id = i.index_id
JOIN sys.columns AS c ON c.object_id = ic.object_id AND c.column_id = ic.column_id
WHERE t.schema_id = SCHEMA_ID(@schema) AND t.is_ms_shipped = 0
  AND i.is_unique = 1 AND i.has_filter = 0 AND i.is_disabled = 0 AND ic.key_ordinal > 0`;

// Foreign keys between tables of the schema, one row per column pair.
const FOREIGN_KEYS_SQL = `
SELECT t.name AS table_name, fk.name AS constraint_name, fkc.constraint_column_id,
  pc.name AS column_name, rt.name AS referenced_table, rc.name AS referenced_column
FROM sys.foreign_keys AS fk
JOIN sys.tables AS t ON t.object_id = fk.parent_object_id
JOIN sys.tables AS rt ON rt.object_id = fk.referenced_object_id
JOIN sys.foreign_key_columns AS fkc ON fkc.constraint_object_id = fk.object_id
JOIN sys.columns AS pc ON pc.object_id = fkc.parent_object_id AND pc.column_id = fkc.parent_column_id
JOIN sys.columns AS rc
  ON rc.object_id = fkc.referenced_object_id AND rc.column_id = fkc.referenced_column_id
WHERE t.schema_id = SCHEMA_ID(@schema) AND rt.schema_id = SCHEMA_ID(@schema)`;

/** One sys.columns row (see `msSqlColumnsSql`) as a source column. */
export function msSqlColumnFromRow(row: MsSqlRow): SourceColumn {
  const name = String(row.column_name);
  const scale = Number(row.scale);
  const sourceType = msSqlSourceType({
    typeName: String(row.type_name),
    maxLength: Number(row.max_length),
    precision: Number(row.precision),
    scale,
  });
  const type = msSqlColumnType(sourceType);
  const nullable = row.is_nullable === true;
  // decimal, numeric, money (4) and smallmoney (4) all carry their scale in sys.columns.
  // DATETIME (1/300 s) declares no scale and keeps milliseconds; SMALLDATETIME whole minutes.
  const undeclared = sourceType === 'datetime' ? 3 : 0;
  return type === 'decimal'
    ? { name, type, nullable, sourceType, scale }
    : { name, type, nullable, sourceType, ...precisionField(type, sourceType, undeclared) };
}

const byNumber = (field: string) => (a: MsSqlRow, b: MsSqlRow) =>
  Number(a[field]) - Number(b[field]);

/** Columns of each table in ordinal order. */
export function msSqlColumnsByTable(rows: readonly MsSqlRow[]): Map<string, SourceColumn[]> {
  const result = new Map<string, SourceColumn[]>();
  for (const [table, columns] of groupBy(rows, (row) => String(row.table_name))) {
    result.set(table, columns.sort(byNumber('column_id')).map(msSqlColumnFromRow));
  }
  return result;
}

/** The catalog rows `introspectMsSql` reads, by query. */
export interface MsSqlCatalogRows {
  readonly tables: readonly MsSqlRow[];
  readonly columns: readonly MsSqlRow[];
  readonly uniqueIndexes: readonly MsSqlRow[];
  readonly foreignKeys: readonly MsSqlRow[];
}

/** The schema the catalog rows describe: tables sorted by name, keys and constraints by name. */
export function msSqlSchemaFromRows(rows: MsSqlCatalogRows): SourceSchema {
  const tableNames = new Set(rows.tables.map((row) => String(row.table_name)));
  const columnsByTable = msSqlColumnsByTable(rows.columns);
  const indexesByTable = groupBy(rows.uniqueIndexes, (row) => String(row.table_name));
  const foreignKeysByTable = groupBy(rows.foreignKeys, (row) => String(row.table_name));

  const tables = rows.tables.map((tableRow): SourceTable => {
    const name = String(tableRow.table_name);

    let primaryKey: string[] = [];
    const uniqueKeys: string[][] = [];
    const indexes = groupBy(indexesByTable.get(name) ?? [], (row) => String(row.index_name));
    for (const [, parts] of [...indexes].sort(([a], [b]) => byName(a, b))) {
      const keyColumns = parts
        .sort(byNumber('key_ordinal'))
        .map((part) => String(part.column_name));
      if (parts[0]!.is_primary_key === true) primaryKey = keyColumns;
      else uniqueKeys.push(keyColumns);
    }

    const constraints = groupBy(foreignKeysByTable.get(name) ?? [], (row) =>
      String(row.constraint_name),
    );
    const foreignKeys: SourceForeignKey[] = [];
    for (const [constraintName, parts] of [...constraints].sort(([a], [b]) => byName(a, b))) {
      parts.sort(byNumber('constraint_column_id'));
      const referencedTable = String(parts[0]!.referenced_table);
      if (!tableNames.has(referencedTable)) continue;
      foreignKeys.push({
        name: constraintName,
        columns: parts.map((part) => String(part.column_name)),
        referencedTable,
        referencedColumns: parts.map((part) => String(part.referenced_column)),
      });
    }

    // sys.partitions keeps a row count per partition of the heap or clustered index; it is
    // maintained as rows change, though not transactionally exact. SUM is a bigint (a string).
    const estimate =
      tableRow.estimated_rows === null ? Number.NaN : Number(tableRow.estimated_rows);
    return {
      name,
      columns: columnsByTable.get(name) ?? [],
      primaryKey,
      uniqueKeys,
      foreignKeys,
      estimatedRows: Number.isFinite(estimate) && estimate >= 0 ? estimate : null,
    };
  });
  return { tables: tables.sort((a, b) => byName(a.name, b.name)) };
}

/** Base tables of `schema`, described from the sys catalog views. */
export async function introspectMsSql(pool: ConnectionPool, schema: string): Promise<SourceSchema> {
  const parameters = [nameParameter('schema', schema)];
  const [tables, columns, uniqueIndexes, foreignKeys] = await Promise.all([
    msSqlQuery(pool, TABLES_SQL, parameters),
    msSqlQuery(pool, msSqlColumnsSql(), parameters),
    msSqlQuery(pool, UNIQUE_INDEXES_SQL, parameters),
    msSqlQuery(pool, FOREIGN_KEYS_SQL, parameters),
  ]);
  return {
    ...msSqlSchemaFromRows({ tables, columns, uniqueIndexes, foreignKeys }),
    views: await introspectMsSqlViews(pool, schema, msSqlColumnsByTable),
  };
}
