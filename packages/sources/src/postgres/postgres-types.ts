import { Buffer } from 'node:buffer';
import type { ColumnType, ElementType, SourceColumn } from '@replix/engine';
import { type RowConverter, rowConverter, type ValueConverter } from '../row-converter.ts';
import { parseDateText, parseTimestampText, parseTimeText } from '../temporal-text.ts';
import { postgresArrayConverter } from './postgres-array-json.ts';
import { isBlankPadded, withoutPadding } from './postgres-blank-padding.ts';

/**
 * PostgreSQL column types in engine terms, and the converters from their text output (every
 * value is read as text; see `postgres-session.ts` for the settings that fix that text's shape)
 * to each type's canonical form.
 */

const BY_NAME: Readonly<Record<string, ColumnType>> = {
  smallint: 'int',
  int2: 'int',
  integer: 'int',
  int: 'int',
  int4: 'int',
  smallserial: 'int',
  serial2: 'int',
  serial: 'int',
  serial4: 'int',
  bigint: 'bigint',
  int8: 'bigint',
  bigserial: 'bigint',
  serial8: 'bigint',
  real: 'float',
  float4: 'float',
  'double precision': 'float',
  float8: 'float',
  float: 'float',
  numeric: 'decimal',
  decimal: 'decimal',
  boolean: 'boolean',
  bool: 'boolean',
  json: 'json',
  jsonb: 'json',
  date: 'date',
  timestamp: 'timestamp',
  'timestamp without time zone': 'timestamp',
  'timestamp with time zone': 'timestamp',
  timestamptz: 'timestamp',
  time: 'time',
  'time without time zone': 'time',
  'time with time zone': 'time',
  timetz: 'time',
  bytea: 'binary',
};

/**
 * The engine type for a type as `format_type()` prints it (`integer`, `numeric(12,2)`,
 * `timestamp(3) without time zone`, `character varying(20)`, `text[]`) or as its internal name
 * (`int8`, `float4`, `timetz`). Arrays (`text[]`, whatever their dimensions) are `array`, their
 * element type is `postgresElementType`'s. Text types, uuid, inet, interval, enums and anything
 * unknown are `string`, delivered in their text form.
 */
export function postgresColumnType(sourceType: string): ColumnType {
  const text = sourceType.trim().toLowerCase();
  if (text.endsWith(']')) return 'array';
  const args = /\(([^)]*)\)/.exec(text)?.[1]?.trim();
  const name = text.replace(/\s*\([^)]*\)/g, '').trim();
  // bit(1) is a flag; wider bit strings stay strings of 0s and 1s.
  if (name === 'bit') return args === undefined || args === '1' ? 'boolean' : 'string';
  return BY_NAME[name] ?? 'string';
}

/** The element type of an array type as `format_type` prints it (`numeric(5,2)[]`). */
export function postgresElementType(sourceType: string): ElementType {
  const type = postgresColumnType(sourceType.replace(/(\s*\[\d*\])+$/, ''));
  return type === 'array' ? 'string' : type;
}

const toNumber: ValueConverter = (value) => Number(value);

/** `t`/`f` for boolean, `1`/`0` for bit(1). */
const toBoolean: ValueConverter = (value) => value === 't' || value === '1';

/** numeric's NaN and ±Infinity are not exact decimals; no canonical form holds them. */
const toDecimal: ValueConverter = (value) =>
  value === 'NaN' || value === 'Infinity' || value === '-Infinity' ? null : value;

/** bytea in `hex` output: `\x` then two hex digits a byte. */
const toBytes: ValueConverter = (value) => Buffer.from(String(value).slice(2), 'hex');

const toDate: ValueConverter = (value) => parseDateText(String(value));
const toTimestamp: ValueConverter = (value) => parseTimestampText(String(value));
const toTime: ValueConverter = (value) => parseTimeText(String(value));
const unpadded: ValueConverter = (value) => withoutPadding(String(value));

/**
 * The converter for one column, or null when the text already is canonical (bigint digits, JSON
 * text, strings). Every type arrives as text, so the choice depends on the engine type alone.
 */
export function postgresValueConverter(column: SourceColumn): ValueConverter | null {
  switch (column.type) {
    case 'int':
    case 'float':
      return toNumber;
    case 'decimal':
      return toDecimal;
    case 'boolean':
      return toBoolean;
    case 'date':
      return toDate;
    case 'timestamp':
      return toTimestamp;
    case 'time':
      return toTime;
    case 'binary':
      return toBytes;
    case 'string':
      // character(n) without its padding, compared as PostgreSQL compares it.
      return isBlankPadded(column.sourceType) ? unpadded : null;
    case 'array':
      return postgresArrayConverter(column);
    default:
      return null;
  }
}

/** One converter per column, built once for a table read. */
export function postgresRowConverter(columns: readonly SourceColumn[]): RowConverter {
  return rowConverter(columns.map(postgresValueConverter));
}
