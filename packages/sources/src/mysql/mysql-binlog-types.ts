import type { ColumnType, SourceColumn } from '@replix/engine';
import { decimalScale } from '../decimal-scale.ts';
import { packedDecimalSize } from './mysql-binlog-decimal.ts';

/** Column type codes of the binlog's table-map events (`enum_field_types`). */
export const BINLOG_TYPE = {
  TINY: 1,
  SHORT: 2,
  LONG: 3,
  FLOAT: 4,
  DOUBLE: 5,
  TIMESTAMP: 7,
  LONGLONG: 8,
  INT24: 9,
  DATE: 10,
  TIME: 11,
  DATETIME: 12,
  YEAR: 13,
  NEWDATE: 14,
  VARCHAR: 15,
  BIT: 16,
  TIMESTAMP2: 17,
  DATETIME2: 18,
  TIME2: 19,
  BLOB_COMPRESSED: 140,
  VARCHAR_COMPRESSED: 141,
  JSON: 245,
  NEWDECIMAL: 246,
  ENUM: 247,
  SET: 248,
  TINY_BLOB: 249,
  MEDIUM_BLOB: 250,
  LONG_BLOB: 251,
  BLOB: 252,
  VAR_STRING: 253,
  STRING: 254,
  GEOMETRY: 255,
} as const;

const T = BINLOG_TYPE;
const BLOBS = [T.TINY_BLOB, T.MEDIUM_BLOB, T.LONG_BLOB, T.BLOB, T.BLOB_COMPRESSED];
const STRINGS = [T.VARCHAR, T.VARCHAR_COMPRESSED, T.VAR_STRING, T.STRING];

/** The binlog types a column of each engine type can arrive as. */
const FITS: Readonly<Record<ColumnType, ReadonlySet<number>>> = {
  int: new Set([T.TINY, T.SHORT, T.INT24, T.LONG, T.YEAR]),
  bigint: new Set([T.LONGLONG, T.BIT]),
  float: new Set([T.FLOAT, T.DOUBLE]),
  decimal: new Set([T.NEWDECIMAL]),
  boolean: new Set([T.TINY, T.BIT]),
  string: new Set([...STRINGS, ...BLOBS, T.ENUM, T.SET, T.GEOMETRY]),
  // MariaDB's JSON is LONGTEXT.
  json: new Set([T.JSON, ...BLOBS]),
  date: new Set([T.DATE, T.NEWDATE]),
  timestamp: new Set([T.DATETIME, T.DATETIME2, T.TIMESTAMP, T.TIMESTAMP2]),
  time: new Set([T.TIME, T.TIME2]),
  binary: new Set([...STRINGS, ...BLOBS]),
  // MySQL has no array type.
  array: new Set(),
};

/** Per-column metadata of a table-map event, as zongji reads it. */
export type BinlogColumnMetadata = Readonly<Record<string, unknown>> | undefined;

/**
 * Why binlog column data of `realType` cannot be the requested `column`, or null when it can.
 * DECIMAL precision and scale and BIT width are checked too: they change the value delivered.
 */
export function binlogTypeMismatch(
  column: SourceColumn,
  realType: number,
  metadata: BinlogColumnMetadata,
): string | null {
  const fits = FITS[column.type].has(realType);
  const declared = /\(\s*(\d+)\s*(?:,\s*(\d+)\s*)?\)/.exec(column.sourceType);
  let detail: string | null = fits ? null : `binlog type ${realType}`;
  if (fits && realType === T.NEWDECIMAL && declared) {
    const scale = decimalScale(column.sourceType) ?? 0;
    if (metadata?.precision !== Number(declared[1]) || metadata?.decimals !== scale) {
      detail = `decimal(${metadata?.precision},${metadata?.decimals})`;
    }
  }
  if (fits && realType === T.BIT) {
    const bits = declared ? Number(declared[1]) : 1;
    if (metadata?.bits !== bits) detail = `bit(${metadata?.bits})`;
  }
  return detail === null
    ? null
    : `column "${column.name}" is ${detail} in the binlog, not ${column.sourceType}`;
}

/**
 * How zongji should read a column whose decoding this connector does itself: its raw bytes.
 * zongji reads a BIT column as a slice of `bits / 8` bytes and a BLOB without charset as a
 * Buffer, so temporal columns are declared BIT of their width and spatial ones BLOB.
 * `columnType` is the `information_schema` text; MariaDB 5.3-era fractional temporals reuse
 * the classic codes with a precision only it shows, and stay with zongji, which reads them.
 */
export function rawBinlogColumn(
  realType: number,
  metadata: BinlogColumnMetadata,
  columnType: string,
): { type: number; metadata: Record<string, unknown>; charset?: null } | null {
  const fsp = Number(metadata?.decimals ?? 0);
  const bytesOf = (base: number) => ({
    type: T.BIT,
    metadata: { bits: (base + Math.ceil(fsp / 2)) * 8 },
  });
  switch (realType) {
    case T.TIME2:
      return bytesOf(3);
    case T.DATETIME2:
      return bytesOf(5);
    case T.TIMESTAMP2:
      return bytesOf(4);
    case T.TIME:
      return /\(\d\)/.test(columnType) ? null : bytesOf(3);
    case T.GEOMETRY:
      return { type: T.BLOB, metadata: { length_size: metadata?.length_size }, charset: null };
    // Read as bytes: zongji decodes floats through a fresh DataView per value and DECIMAL
    // digits through string padding, both slow and garbage-heavy on a hot stream.
    case T.NEWDECIMAL: {
      const precision = Number(metadata?.precision ?? 0);
      const scale = Number(metadata?.decimals ?? 0);
      return { type: T.BIT, metadata: { bits: packedDecimalSize(precision, scale) * 8 } };
    }
    case T.FLOAT:
      return { type: T.BIT, metadata: { bits: 32 } };
    case T.DOUBLE:
      return { type: T.BIT, metadata: { bits: 64 } };
    default:
      return null;
  }
}
