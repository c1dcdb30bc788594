import { Buffer } from 'node:buffer';
import type { ColumnType, SourceColumn } from '@replix/engine';
import { SourceError } from '../errors.ts';
import { type RowConverter, rowConverter, type ValueConverter } from '../row-converter.ts';

/**
 * SQL Server column types in engine terms, and the converters from what tedious delivers (with
 * the options in `mssql-connection-options.ts` and the casts in `mssql-sql.ts`) to each type's
 * canonical form.
 */

/** The type name of a source type text: `decimal(12,2)` → `decimal`, `nvarchar(max)` → `nvarchar`. */
export function msSqlBaseType(sourceType: string): string {
  const text = sourceType.trim().toLowerCase();
  const open = text.indexOf('(');
  return (open < 0 ? text : text.slice(0, open)).trim();
}

const BY_TYPE_NAME: Readonly<Record<string, ColumnType>> = {
  tinyint: 'int',
  smallint: 'int',
  int: 'int',
  bigint: 'bigint',
  real: 'float',
  float: 'float',
  decimal: 'decimal',
  numeric: 'decimal',
  money: 'decimal',
  smallmoney: 'decimal',
  bit: 'boolean',
  // SQL Server 2025's native json type; JSON kept in nvarchar columns is just text.
  json: 'json',
  date: 'date',
  datetime: 'timestamp',
  datetime2: 'timestamp',
  smalldatetime: 'timestamp',
  datetimeoffset: 'timestamp',
  time: 'time',
  binary: 'binary',
  varbinary: 'binary',
  image: 'binary',
  // `timestamp` is SQL Server's old name for rowversion, an 8-byte counter, not a point in time.
  rowversion: 'binary',
  timestamp: 'binary',
};

/**
 * The engine type for a source type as the introspector prints it (`int`, `decimal(12,2)`,
 * `datetime2(3)`, `nvarchar(max)`). Text types, uniqueidentifier, xml, sql_variant, hierarchyid,
 * the spatial types and anything unknown are `string`.
 */
export function msSqlColumnType(sourceType: string): ColumnType {
  return BY_TYPE_NAME[msSqlBaseType(sourceType)] ?? 'string';
}

/** One column's type as sys.columns describes it; `typeName` is the system type's name. */
export interface MsSqlTypeFacts {
  readonly typeName: string;
  /** Bytes; -1 for `max`. */
  readonly maxLength: number;
  readonly precision: number;
  readonly scale: number;
}

const BYTE_LENGTH_TYPES = new Set(['char', 'varchar', 'binary', 'varbinary']);
const CHARACTER_PAIR_TYPES = new Set(['nchar', 'nvarchar']);
const FRACTIONAL_SECOND_TYPES = new Set(['datetime2', 'datetimeoffset', 'time']);

/**
 * The type as it would be declared: `nvarchar(40)` (sys.columns counts bytes, two per UTF-16
 * code unit), `varbinary(max)`, `decimal(12,2)`, `datetime2(3)`, or the bare name.
 */
export function msSqlSourceType(facts: MsSqlTypeFacts): string {
  const name = facts.typeName.toLowerCase();
  const max = facts.maxLength === -1;
  if (BYTE_LENGTH_TYPES.has(name)) return `${name}(${max ? 'max' : facts.maxLength})`;
  if (CHARACTER_PAIR_TYPES.has(name)) return `${name}(${max ? 'max' : facts.maxLength / 2})`;
  if (name === 'decimal' || name === 'numeric') return `${name}(${facts.precision},${facts.scale})`;
  if (FRACTIONAL_SECOND_TYPES.has(name)) return `${name}(${facts.scale})`;
  return name;
}

/**
 * Large-object types: change data capture leaves them NULL in update before-images unless the
 * update changed them, so there a NULL means "not sent", not "was NULL".
 */
export function isMsSqlLargeObjectType(sourceType: string): boolean {
  const name = msSqlBaseType(sourceType);
  if (name === 'text' || name === 'ntext' || name === 'image' || name === 'xml') return true;
  if (name === 'json') return true;
  return /\(\s*max\s*\)/i.test(sourceType);
}

/** text, ntext and image: change data capture never sends them in before-images or deletes. */
export function isMsSqlLegacyLargeObjectType(sourceType: string): boolean {
  const name = msSqlBaseType(sourceType);
  return name === 'text' || name === 'ntext' || name === 'image';
}

function invalid(kind: string, value: unknown): SourceError {
  return new SourceError(
    'source_value_invalid',
    `Unexpected ${kind} value from the source (${typeof value}).`,
  );
}

function asDate(value: unknown, kind: string): Date {
  if (value instanceof Date && !Number.isNaN(value.getTime())) return value;
  throw invalid(kind, value);
}

function twoDigits(value: number): string {
  return value < 10 ? `0${value}` : String(value);
}

/**
 * A DATE arrives as a `Date` at midnight UTC (`useUTC`); its UTC fields are the date. Years run
 * from 0001 to 9999, so the year is padded to four digits.
 */
export const msSqlDate: ValueConverter = (value) => {
  const date = asDate(value, 'date');
  const year = String(date.getUTCFullYear()).padStart(4, '0');
  return `${year}-${twoDigits(date.getUTCMonth() + 1)}-${twoDigits(date.getUTCDate())}`;
};

const TICKS_PER_MICROSECOND = 10;

/**
 * The 100 ns ticks past the whole millisecond that tedious keeps beside a DATETIME2,
 * DATETIMEOFFSET or TIME value (`nanosecondsDelta`, in seconds), as whole microseconds, cut:
 * the canonical forms hold microseconds, and cutting never moves a value into the next second.
 */
function extraMicros(date: Date): number {
  const delta = (date as Date & { nanosecondsDelta?: unknown }).nanosecondsDelta;
  if (typeof delta !== 'number') return 0;
  return Math.floor(Math.round(delta * 10_000_000) / TICKS_PER_MICROSECOND);
}

/**
 * DATETIME, SMALLDATETIME and DATETIME2 arrive as their wall clock read as UTC; DATETIMEOFFSET
 * as its UTC instant (tedious decodes the UTC value the server sends and ignores the offset).
 * Epoch microseconds: tedious's whole milliseconds plus the microseconds of its
 * `nanosecondsDelta`; a seventh fractional digit (100 ns) is cut.
 */
export const msSqlTimestamp: ValueConverter = (value) => {
  const date = asDate(value, 'timestamp');
  return date.getTime() * 1000 + extraMicros(date);
};

/**
 * TIME arrives as a `Date` on 1970-01-01 UTC holding the whole milliseconds, with the rest of
 * its 100 ns ticks in `nanosecondsDelta`. Seconds with a microsecond fraction (the seventh
 * digit cut), divided once so `12:34:56.123456` gives the double of `45296.123456`.
 */
export const msSqlTimeSeconds: ValueConverter = (value) => {
  const date = asDate(value, 'time');
  return (date.getTime() * 1000 + extraMicros(date)) / 1_000_000;
};

/**
 * A user-defined CLR type read without `ToString()` would come as its serialised bytes; text
 * is the only canonical form a `string` column has.
 */
const msSqlText: ValueConverter = (value) => {
  if (typeof value === 'string') return value;
  if (value instanceof Uint8Array) return `0x${Buffer.from(value).toString('hex')}`;
  return String(value);
};

/**
 * The converter for one column, or null when tedious already delivers the canonical form:
 * numbers for int and float, strings for BIGINT, booleans for bit, Buffers for binary, and text
 * for DECIMAL / MONEY because `mssql-sql.ts` casts them to varchar in the query.
 */
export function msSqlValueConverter(column: SourceColumn): ValueConverter | null {
  switch (column.type) {
    case 'date':
      return msSqlDate;
    case 'timestamp':
      return msSqlTimestamp;
    case 'time':
      return msSqlTimeSeconds;
    case 'string':
    case 'json':
      return msSqlText;
    default:
      return null;
  }
}

/** One converter per column, built once for a table read or a change query. */
export function msSqlRowConverter(columns: readonly SourceColumn[]): RowConverter {
  return rowConverter(columns.map(msSqlValueConverter));
}
