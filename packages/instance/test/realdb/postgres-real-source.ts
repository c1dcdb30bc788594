import pg from 'pg';
import { type Canonical, canonicalSource } from './canonical-value.ts';
import { groupTables } from './mariadb-real-source.ts';
import { type CanonicalRow, type RealSource, rowKey } from './real-source.ts';

/** Every value arrives as PostgreSQL's own text output: nothing is parsed or rounded. */
const rawText = { getTypeParser: () => (text: string) => text };

/** The SQL that reads one column as its canonical text (the session runs in UTC). */
function canonicalExpression(column: string, type: string): string {
  const c = `"${column}"`;
  if (type.endsWith('[]')) return `array_to_json(${c})::text`;
  if (type === 'boolean')
    return `CASE WHEN ${c} IS NULL THEN NULL WHEN ${c} THEN 'true' ELSE 'false' END`;
  if (type.startsWith('timestamp')) {
    return `to_char(${c}, 'YYYY-MM-DD"T"HH24:MI:SS.US"Z"')`;
  }
  if (type === 'date') return `to_char(${c}, 'YYYY-MM-DD')`;
  if (type === 'bytea') return `encode(${c}, 'hex')`;
  // character(n) as PostgreSQL converts it to text, whose comparisons ignore the padding.
  if (type.startsWith('character(')) return `${c}::text`;
  // Everything else as PostgreSQL prints it: numeric keeps its scale, enums their label.
  return c;
}

/** Arrays come as JSON text from `array_to_json`; their elements compare like served ones. */
function arrayValue(text: Canonical): Canonical {
  return typeof text === 'string' ? canonicalSource(JSON.parse(text)) : text;
}

/** Pagila (or any database) on PostgreSQL, read with SQL. */
export async function postgresRealSource(url: string): Promise<RealSource> {
  const client = new pg.Client({ connectionString: url, types: rawText });
  await client.connect();
  await client.query("SET TimeZone = 'UTC'");
  const rows = async (sql: string): Promise<CanonicalRow[]> => {
    const result = await client.query(sql);
    return result.rows.map((row: Record<string, unknown>) => canonicalSource(row) as CanonicalRow);
  };
  return {
    async tables() {
      const columns = await rows(`
        SELECT c.relname AS t, a.attname AS c, format_type(a.atttypid, a.atttypmod) AS type,
          (SELECT array_position(i.indkey::int2[], a.attnum)::text FROM pg_index i
            WHERE i.indrelid = c.oid AND i.indisprimary) AS pk
        FROM pg_class c
        JOIN pg_namespace n ON n.oid = c.relnamespace
        JOIN pg_attribute a ON a.attrelid = c.oid AND a.attnum > 0 AND NOT a.attisdropped
        WHERE n.nspname = 'public' AND c.relkind IN ('r', 'p') AND NOT c.relispartition
        ORDER BY c.relname, a.attnum`);
      return groupTables(columns);
    },
    async relation(name, key) {
      const columns = await rows(`
        SELECT c.relname AS t, a.attname AS c, format_type(a.atttypid, a.atttypmod) AS type,
          NULL AS pk
        FROM pg_class c
        JOIN pg_namespace n ON n.oid = c.relnamespace
        JOIN pg_attribute a ON a.attrelid = c.oid AND a.attnum > 0 AND NOT a.attisdropped
        WHERE n.nspname = 'public' AND c.relname = '${name}'
        ORDER BY a.attnum`);
      const [table] = groupTables(columns);
      if (!table) throw new Error(`the source has no relation ${name}`);
      return { ...table, primaryKey: key };
    },
    async tableRows(table) {
      const select = table.columns
        .map((column) => `${canonicalExpression(column.name, column.type)} AS "${column.name}"`)
        .join(', ');
      const all = await rows(`SELECT ${select} FROM "${table.name}"`);
      for (const column of table.columns.filter((c) => c.type.endsWith('[]'))) {
        for (const row of all) row[column.name] = arrayValue(row[column.name] ?? null);
      }
      return new Map(all.map((row) => [rowKey(row, table.primaryKey), row]));
    },
    rows,
    async exec(sql) {
      await client.query(sql);
    },
    close: () => client.end(),
  };
}
