import { Buffer } from 'node:buffer';
import type { SourceColumn } from '@replix/engine';
import type { ValueConverter } from '../row-converter.ts';
import { parseDateText, parseTimestampText, parseTimeText } from '../temporal-text.ts';
import { decodePackedDecimal } from './mysql-binlog-decimal.ts';
import {
  decodeClassicTime,
  decodeDatetime2,
  decodeTime2,
  decodeTimestamp2,
} from './mysql-binlog-temporal.ts';
import { type BinlogColumnMetadata, BINLOG_TYPE as T } from './mysql-binlog-types.ts';
import { mySqlGeometryText } from './mysql-geometry.ts';
import { mySqlBitsToDecimal, mySqlBoolean } from './mysql-types.ts';

/**
 * Converters from what zongji delivers for a binlog column (with the raw-byte overrides of
 * `rawBinlogColumn`) to the canonical forms, which must equal what the snapshot reader
 * delivers for the same value: the snapshot reads the server's text, the stream the binlog's
 * binary encoding, so wherever the server's printing rounds or reshapes a value, the same is
 * done here.
 */

function text(value: unknown): string {
  if (typeof value === 'string') return value;
  if (value instanceof Uint8Array) return Buffer.from(value).toString('utf8');
  return String(value);
}

/** The raw bytes as a Buffer view (no copy). */
function asBuffer(value: unknown): Buffer {
  const raw = bytes(value);
  return Buffer.isBuffer(raw) ? raw : Buffer.from(raw.buffer, raw.byteOffset, raw.byteLength);
}

function bytes(value: unknown): Uint8Array {
  if (value instanceof Uint8Array) return value;
  throw new TypeError('Expected the raw bytes of a binlog column.');
}

/** The `D` of `FLOAT(M,D)` / `DOUBLE(M,D)`, which the server prints with exactly D decimals. */
function declaredDecimals(sourceType: string): number | undefined {
  const match = /\(\s*\d+\s*,\s*(\d+)\s*\)/.exec(sourceType);
  return match ? Number(match[1]) : undefined;
}

/**
 * The server prints a FLOAT with 6 significant digits (`my_gcvt` with FLT_DIG), a DOUBLE with
 * the shortest digits that read back exactly (as JavaScript does), and either with exactly D
 * decimals when declared `(M,D)`. The binlog holds the raw IEEE value.
 */
function floatConverter(column: SourceColumn, realType: number): ValueConverter {
  // The column arrives as its raw little-endian IEEE bytes (see `rawBinlogColumn`).
  const read =
    realType === T.FLOAT
      ? (value: unknown) => asBuffer(value).readFloatLE(0)
      : (value: unknown) => asBuffer(value).readDoubleLE(0);
  const decimals = declaredDecimals(column.sourceType);
  if (decimals !== undefined) return (value) => Number(read(value).toFixed(decimals));
  if (realType === T.FLOAT) return (value) => Number(read(value).toPrecision(6));
  return read;
}

/**
 * The converter for one requested column arriving as binlog type `realType` (with its
 * table-map `metadata`), or null when zongji's value already is canonical (ints, DOUBLE,
 * DECIMAL digits as a string).
 */
export function binlogValueConverter(
  column: SourceColumn,
  realType: number,
  metadata: BinlogColumnMetadata,
): ValueConverter | null {
  switch (column.type) {
    case 'int':
      // YEAR 0000 is stored as 0, which zongji reads as 1900 (a YEAR cannot hold 1900).
      return realType === T.YEAR ? (value) => (value === 1900 ? 0 : value) : null;
    case 'bigint':
      // zongji gives a number up to 2^53 and an exact string beyond.
      return realType === T.BIT ? mySqlBitsToDecimal : String;
    case 'float':
      return floatConverter(column, realType);
    case 'decimal': {
      // Arrives as its packed bytes (see `rawBinlogColumn`).
      const precision = Number(metadata?.precision ?? 0);
      const scale = Number(metadata?.decimals ?? 0);
      return (value) => decodePackedDecimal(bytes(value), precision, scale);
    }
    case 'boolean':
      return mySqlBoolean;
    case 'string':
      if (realType === T.GEOMETRY) return (value) => mySqlGeometryText(bytes(value));
      return text;
    case 'json':
      return text;
    case 'date':
      return (value) => parseDateText(text(value));
    case 'timestamp':
      return timestampConverter(realType, Number(metadata?.decimals ?? 0));
    case 'time':
      return timeConverter(realType, Number(metadata?.decimals ?? 0));
    case 'binary':
      // A copy: zongji's Buffer may be a view of the whole network packet, which it would pin.
      return (value) => Buffer.from(bytes(value));
    case 'array':
      return null; // MySQL has no array type: no column is one
  }
}

function timestampConverter(realType: number, fsp: number): ValueConverter {
  if (realType === T.DATETIME2) return (value) => decodeDatetime2(bytes(value), fsp);
  if (realType === T.TIMESTAMP2) return (value) => decodeTimestamp2(bytes(value), fsp);
  // Classic DATETIME / TIMESTAMP and MariaDB 5.3 fractional ones: zongji's text.
  return (value) => parseTimestampText(text(value));
}

function timeConverter(realType: number, fsp: number): ValueConverter {
  if (realType === T.TIME2) return (value) => decodeTime2(bytes(value), fsp);
  // Classic TIME arrives raw (see `rawBinlogColumn`), MariaDB 5.3 fractional TIME as text.
  return (value) =>
    value instanceof Uint8Array ? decodeClassicTime(value) : parseTimeText(text(value));
}
