import mysql from 'mysql2/promise';
import { canonicalSource } from './canonical-value.ts';
import { type CanonicalRow, type RealSource, rowKey, type SourceTable } from './real-source.ts';

const SPATIAL = new Set([
  'geometry',
  'point',
  'linestring',
  'polygon',
  'multipoint',
  'multilinestring',
  'multipolygon',
  'geometrycollection',
]);
const BINARY = new Set(['binary', 'varbinary', 'tinyblob', 'blob', 'mediumblob', 'longblob']);

/** The SQL that reads one column as its canonical text (the session runs in UTC). */
function canonicalExpression(column: string, type: string): string {
  const c = `\`${column}\``;
  const base = type.replace(/\(.*$/, '').split(' ')[0] ?? type;
  if (type.startsWith('tinyint(1)') || type === 'bit(1)') {
    return `IF(${c} IS NULL, NULL, IF(${c} <> 0, 'true', 'false'))`;
  }
  if (base === 'timestamp' || base === 'datetime') {
    return `DATE_FORMAT(${c}, '%Y-%m-%dT%H:%i:%s.%fZ')`;
  }
  if (base === 'date') return `DATE_FORMAT(${c}, '%Y-%m-%d')`;
  if (BINARY.has(base)) return `LOWER(HEX(${c}))`;
  if (SPATIAL.has(base)) return `ST_AsText(${c})`;
  return `CAST(${c} AS CHAR CHARACTER SET utf8mb4)`;
}

/** Sakila (or any database) on MariaDB, read with SQL. */
export async function mariaDbRealSource(url: string): Promise<RealSource> {
  const connection = await mysql.createConnection({
    uri: url,
    multipleStatements: true,
    dateStrings: true,
    supportBigNumbers: true,
    bigNumberStrings: true,
  });
  await connection.query("SET time_zone = '+00:00'");
  const rows = async (sql: string): Promise<CanonicalRow[]> => {
    const [result] = await connection.query(sql);
    return (result as Record<string, unknown>[]).map(
      (row) => canonicalSource({ ...row }) as CanonicalRow,
    );
  };
  return {
    async tables() {
      const columns = await rows(`
        SELECT c.TABLE_NAME AS t, c.COLUMN_NAME AS c, c.COLUMN_TYPE AS type,
          IF(k.ORDINAL_POSITION IS NULL, NULL, CAST(k.ORDINAL_POSITION AS CHAR)) AS pk
        FROM information_schema.COLUMNS c
        JOIN information_schema.TABLES t
          ON t.TABLE_SCHEMA = c.TABLE_SCHEMA AND t.TABLE_NAME = c.TABLE_NAME
        LEFT JOIN information_schema.KEY_COLUMN_USAGE k
          ON k.TABLE_SCHEMA = c.TABLE_SCHEMA AND k.TABLE_NAME = c.TABLE_NAME
          AND k.COLUMN_NAME = c.COLUMN_NAME AND k.CONSTRAINT_NAME = 'PRIMARY'
        WHERE c.TABLE_SCHEMA = DATABASE() AND t.TABLE_TYPE = 'BASE TABLE'
        ORDER BY c.TABLE_NAME, c.ORDINAL_POSITION`);
      return groupTables(columns);
    },
    async relation(name, key) {
      const columns = await rows(`
        SELECT TABLE_NAME AS t, COLUMN_NAME AS c, COLUMN_TYPE AS type, NULL AS pk
        FROM information_schema.COLUMNS
        WHERE TABLE_SCHEMA = DATABASE() AND TABLE_NAME = '${name}'
        ORDER BY ORDINAL_POSITION`);
      const [table] = groupTables(columns);
      if (!table) throw new Error(`the source has no relation ${name}`);
      return { ...table, primaryKey: key };
    },
    async tableRows(table) {
      const select = table.columns
        .map((column) => `${canonicalExpression(column.name, column.type)} AS \`${column.name}\``)
        .join(', ');
      const all = await rows(`SELECT ${select} FROM \`${table.name}\``);
      return new Map(all.map((row) => [rowKey(row, table.primaryKey), row]));
    },
    rows,
    async exec(sql) {
      await connection.query(sql);
    },
    close: () => connection.end(),
  };
}

/** information_schema rows (`t`, `c`, `type`, `pk` ordinal) to tables. */
export function groupTables(columns: CanonicalRow[]): SourceTable[] {
  const tables = new Map<
    string,
    { name: string; columns: { name: string; type: string }[]; keys: [number, string][] }
  >();
  for (const row of columns) {
    const name = String(row.t);
    const table = tables.get(name) ?? { name, columns: [], keys: [] };
    tables.set(name, table);
    table.columns.push({ name: String(row.c), type: String(row.type) });
    if (row.pk !== null) table.keys.push([Number(row.pk), String(row.c)]);
  }
  return [...tables.values()].map((table) => ({
    name: table.name,
    columns: table.columns,
    primaryKey: table.keys.sort((a, b) => a[0] - b[0]).map(([, column]) => column),
  }));
}
