import { Buffer } from 'node:buffer';
import type { ColumnType, SourceColumn } from '@replix/engine';
import { type RowConverter, rowConverter, type ValueConverter } from '../row-converter.ts';
import { parseDateText, parseTimestampText, parseTimeText } from '../temporal-text.ts';

/**
 * MySQL / MariaDB column types in engine terms, and the converters from what mysql2 delivers
 * (with the options in `mysql-connection-options.ts`) to each type's canonical form.
 */

/** The base name, the text between its parentheses, and what follows (e.g. ` unsigned`). */
function splitColumnType(columnType: string): { base: string; args: string | undefined } {
  const text = columnType.trim().toLowerCase();
  const open = text.indexOf('(');
  if (open < 0) return { base: text.split(' ')[0] ?? text, args: undefined };
  const close = text.indexOf(')', open);
  return { base: text.slice(0, open).trim(), args: text.slice(open + 1, close).trim() };
}

const BY_BASE_NAME: Readonly<Record<string, ColumnType>> = {
  smallint: 'int',
  mediumint: 'int',
  // Even INT UNSIGNED tops out at 4294967295, well inside a double's exact integers.
  int: 'int',
  integer: 'int',
  year: 'int',
  bigint: 'bigint',
  float: 'float',
  double: 'float',
  real: 'float',
  decimal: 'decimal',
  numeric: 'decimal',
  dec: 'decimal',
  fixed: 'decimal',
  bool: 'boolean',
  boolean: 'boolean',
  json: 'json',
  date: 'date',
  datetime: 'timestamp',
  timestamp: 'timestamp',
  time: 'time',
  binary: 'binary',
  varbinary: 'binary',
  tinyblob: 'binary',
  blob: 'binary',
  mediumblob: 'binary',
  longblob: 'binary',
};

/**
 * The engine type for an `information_schema.COLUMNS.COLUMN_TYPE` text such as `int(10) unsigned`,
 * `tinyint(1)` or `decimal(12,2)`. Text types, ENUM, SET and anything unknown are `string`.
 */
export function mySqlColumnType(columnType: string): ColumnType {
  const { base, args } = splitColumnType(columnType);
  // BOOLEAN is an alias of TINYINT(1); by convention the pair means a flag.
  if (base === 'tinyint') return args === '1' ? 'boolean' : 'int';
  if (base === 'bit') return args === undefined || args === '1' ? 'boolean' : 'bigint';
  return BY_BASE_NAME[base] ?? 'string';
}

/** Spatial types: selected through `ST_AsText` so they arrive as WKT text, not parsed objects. */
const SPATIAL_TYPES = new Set([
  'geometry',
  'point',
  'linestring',
  'polygon',
  'multipoint',
  'multilinestring',
  'multipolygon',
  'geometrycollection',
  'geomcollection',
]);

export function isMySqlSpatialType(sourceType: string): boolean {
  return SPATIAL_TYPES.has(splitColumnType(sourceType).base);
}

/** TINYINT(1) arrives as a number, BIT(1) as a one-byte Buffer. */
export function mySqlBoolean(value: unknown): boolean {
  if (typeof value === 'number') return value !== 0;
  if (value instanceof Uint8Array) return value.some((byte) => byte !== 0);
  return value !== '0' && value !== '';
}

/** BIT(n) arrives as big-endian bytes; its value as a decimal string, as for every `bigint`. */
export function mySqlBitsToDecimal(value: unknown): string {
  if (!(value instanceof Uint8Array)) return String(value);
  let result = 0n;
  for (const byte of value) result = (result << 8n) | BigInt(byte);
  return result.toString();
}

/** mysql2 hands binary-collated text (e.g. some `ST_AsText` results) over as a Buffer. */
function text(value: unknown): string {
  if (typeof value === 'string') return value;
  if (value instanceof Uint8Array) return Buffer.from(value).toString('utf8');
  return String(value);
}

const date: ValueConverter = (value) => parseDateText(text(value));
const timestamp: ValueConverter = (value) => parseTimestampText(text(value));
const time: ValueConverter = (value) => parseTimeText(text(value));

/**
 * The converter for one column, or null when mysql2 already delivers the canonical form: ints
 * and floats as numbers, BIGINT and DECIMAL as exact strings (`bigNumberStrings`), JSON as its
 * text (`jsonStrings`), binary as a Buffer.
 */
export function mySqlValueConverter(column: SourceColumn): ValueConverter | null {
  switch (column.type) {
    case 'boolean':
      return mySqlBoolean;
    case 'bigint':
      return column.sourceType.toLowerCase().startsWith('bit') ? mySqlBitsToDecimal : null;
    case 'string':
    case 'json':
      return text;
    case 'date':
      return date;
    case 'timestamp':
      return timestamp;
    case 'time':
      return time;
    default:
      return null;
  }
}

/** One converter per column, built once for a table read. */
export function mySqlRowConverter(columns: readonly SourceColumn[]): RowConverter {
  return rowConverter(columns.map(mySqlValueConverter));
}
