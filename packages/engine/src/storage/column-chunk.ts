import type { Buffer } from 'node:buffer';
import type { ExactTexts } from './exact-texts.ts';

/**
 * One column's values for the rows of one chunk, in the most compact form the values allow.
 * Chunks are immutable once built; a later generation replaces a chunk, never edits it.
 */
export type ColumnChunk =
  | Int32Chunk
  | Float64Chunk
  | DecimalChunk
  | BoolChunk
  | DictChunk
  | BytesChunk;

interface ChunkBase {
  /** Null bitmap (bit set = NULL); null when the chunk has no NULL. */
  readonly nulls: Uint8Array | null;
}

/** Integers that fit 32 bits, and dates as days since 1970-01-01. */
export interface Int32Chunk extends ChunkBase {
  readonly kind: 'int32';
  readonly values: Int32Array;
}

/**
 * Doubles: floats, wider integers, timestamps (epoch ms), times (seconds), and decimals without
 * a declared scale (or one past 22; the others are `DecimalChunk`s). `exact` holds the source
 * text of the few values a double cannot carry digit for digit (BIGINT past 2^53, a NUMERIC
 * with more digits than a double keeps), keyed by row offset.
 */
export interface Float64Chunk extends ChunkBase {
  readonly kind: 'float64';
  readonly values: Float64Array;
  readonly exact: ExactTexts | null;
}

/**
 * A DECIMAL with a declared scale as scaled integers (storage/decimal-units.ts): `values[i]` is
 * the row's count of 10^-scale units, a safe integer; NaN for the rows whose source text
 * `exact` holds instead (units past 2^53, or a text other than the units' canonical one).
 */
export interface DecimalChunk extends ChunkBase {
  readonly kind: 'decimal';
  readonly values: Float64Array;
  readonly scale: number;
  readonly exact: ExactTexts | null;
}

export interface BoolChunk extends ChunkBase {
  readonly kind: 'bool';
  readonly values: Uint8Array;
}

/** Low-cardinality text: each row holds a code into the chunk's dictionary. */
export interface DictChunk extends ChunkBase {
  readonly kind: 'dict';
  readonly codes: Uint16Array;
  readonly dictionary: readonly string[];
}

/**
 * Text as UTF-8 (or raw bytes for binary columns) in one flat buffer; row i spans
 * `bytes[offsets[i] .. offsets[i + 1])`. UTF-8 byte order is code point order.
 */
export interface BytesChunk extends ChunkBase {
  readonly kind: 'bytes';
  /** `utf8` for text columns, `raw` for binary ones. */
  readonly encoding: 'utf8' | 'raw';
  readonly bytes: Buffer;
  readonly offsets: Uint32Array;
}

export function chunkByteSize(chunk: ColumnChunk): number {
  const nulls = chunk.nulls?.byteLength ?? 0;
  switch (chunk.kind) {
    case 'int32':
    case 'bool':
      return chunk.values.byteLength + nulls;
    case 'float64':
    case 'decimal': {
      const exact = chunk.exact?.byteSize ?? 0;
      return chunk.values.byteLength + nulls + exact;
    }
    case 'dict': {
      let dictionary = 0;
      for (const entry of chunk.dictionary) dictionary += 24 + entry.length;
      return chunk.codes.byteLength + dictionary + nulls;
    }
    case 'bytes':
      return chunk.bytes.byteLength + chunk.offsets.byteLength + nulls;
  }
}
