import type { SourceColumn } from '@replix/engine';
import type { ColumnSchema } from '@vlasky/zongji';
import type { Pool } from 'mysql2/promise';

const ESCAPES: Readonly<Record<string, string>> = {
  n: '\n',
  r: '\r',
  t: '\t',
  '0': '\0',
  Z: '\x1a',
  b: '\b',
};

/**
 * The values of an `enum('a','it''s')` / `set(…)` column type as information_schema prints it:
 * quotes doubled, backslashes escaped. zongji's own reading splits on every comma.
 */
export function enumValues(columnType: string): string[] {
  const values: string[] = [];
  const open = columnType.indexOf('(');
  let i = open + 1;
  while (open >= 0 && i < columnType.length && columnType[i] === "'") {
    let value = '';
    i++;
    while (i < columnType.length) {
      const char = columnType[i]!;
      if (char === "'" && columnType[i + 1] === "'") {
        value += "'";
        i += 2;
      } else if (char === "'") {
        i++;
        break;
      } else if (char === '\\') {
        const next = columnType[i + 1] ?? '';
        value += ESCAPES[next] ?? next;
        i += 2;
      } else {
        value += char;
        i++;
      }
    }
    values.push(value);
    if (columnType[i] === ',') i++;
  }
  return values;
}

const LAYOUT_SQL = `
SELECT TABLE_NAME AS table_name, COLUMN_NAME AS column_name, COLLATION_NAME AS collation_name,
  CHARACTER_SET_NAME AS character_set_name, COLUMN_COMMENT AS column_comment,
  COLUMN_TYPE AS column_type
FROM information_schema.COLUMNS
WHERE TABLE_SCHEMA = DATABASE() AND TABLE_NAME IN (?)
ORDER BY TABLE_NAME, ORDINAL_POSITION`;

type Row = Record<string, unknown>;

const textOrNull = (value: unknown) => (value === null ? null : String(value));

/**
 * Every column of each table, in table order, in the shape zongji decodes rows with. Read once
 * when a stream starts: the binlog names no columns, so row images are matched to these by
 * position, and a table-map event whose columns no longer fit them means the table changed.
 */
export async function readBinlogLayouts(
  pool: Pool,
  tables: readonly string[],
): Promise<Map<string, ColumnSchema[]>> {
  const layouts = new Map<string, ColumnSchema[]>();
  if (tables.length === 0) return layouts;
  const [rows] = (await pool.query(LAYOUT_SQL, [tables])) as [Row[], unknown];
  for (const row of rows) {
    const table = String(row.table_name);
    const columnType = String(row.column_type);
    const schema: ColumnSchema = {
      COLUMN_NAME: String(row.column_name),
      COLLATION_NAME: textOrNull(row.collation_name),
      CHARACTER_SET_NAME: textOrNull(row.character_set_name),
      COLUMN_COMMENT: String(row.column_comment ?? ''),
      COLUMN_TYPE: columnType,
    };
    if (columnType.startsWith('enum(')) schema.ENUM_VALUES = enumValues(columnType);
    if (columnType.startsWith('set(')) schema.SET_VALUES = enumValues(columnType);
    const layout = layouts.get(table) ?? [];
    layout.push(schema);
    layouts.set(table, layout);
  }
  return layouts;
}

/** Why the table as it is now cannot give the requested columns; null when it can. */
export function binlogLayoutMismatch(
  columns: readonly SourceColumn[],
  layout: readonly ColumnSchema[] | undefined,
): string | null {
  if (layout === undefined) return 'The table does not exist any more.';
  for (const column of columns) {
    const schema = layout.find((candidate) => candidate.COLUMN_NAME === column.name);
    if (!schema) return `Column "${column.name}" is gone.`;
    // MariaDB's JSON is a LONGTEXT the introspector recognises by its json_valid() check.
    const json = column.type === 'json' && schema.COLUMN_TYPE === 'longtext';
    if (schema.COLUMN_TYPE !== column.sourceType && !json) {
      return `Column "${column.name}" is ${schema.COLUMN_TYPE} now, not ${column.sourceType}.`;
    }
  }
  return null;
}
