import { Buffer } from 'node:buffer';
import type { ColumnType } from '../source-schema.ts';
import { civilFromDays } from './civil-date.ts';
import { formatStoredNumber } from './column-builder.ts';
import type { ColumnChunk } from './column-chunk.ts';
import { type Comparable, numericComparable } from './comparable.ts';
import { formatUnits, unitsValue } from './decimal-units.ts';

// `getBit` of storage/bitmap.ts written out: in a per-row scan the call costs ~10%.
export function isNullAt(chunk: ColumnChunk, offset: number): boolean {
  const nulls = chunk.nulls;
  return nulls !== null && ((nulls[offset >>> 3] as number) & (1 << (offset & 7))) !== 0;
}

/**
 * The value at `offset` in the comparison domain: numbers for numeric, date (days), timestamp
 * (ms) and time (s) columns; strings for text and JSON (binary as lowercase hex); booleans.
 */
export function readComparable(chunk: ColumnChunk, offset: number): Comparable | null {
  if (isNullAt(chunk, offset)) return null;
  switch (chunk.kind) {
    case 'int32':
      return chunk.values[offset] as number;
    case 'float64': {
      const exact = chunk.exact === null ? undefined : chunk.exact.get(offset);
      return exact === undefined ? (chunk.values[offset] as number) : numericComparable(exact);
    }
    case 'decimal': {
      // The value's double, as `numericComparable` gives it from the text: filters and sorts
      // that read the units themselves compare exactly (predicate.ts, scan-top-k.ts).
      const exact = chunk.exact === null ? undefined : chunk.exact.get(offset);
      return exact === undefined
        ? unitsValue(chunk.values[offset] as number, chunk.scale)
        : numericComparable(exact);
    }
    case 'bool':
      return chunk.values[offset] === 1;
    case 'dict':
      return chunk.dictionary[chunk.codes[offset] as number] as string;
    case 'bytes': {
      const start = chunk.offsets[offset] as number;
      const end = chunk.offsets[offset + 1] as number;
      return chunk.bytes.toString(chunk.encoding === 'raw' ? 'hex' : 'utf8', start, end);
    }
  }
}

/** The value at `offset` in its canonical source form (as a connector delivers it). */
export function readCanonical(
  chunk: ColumnChunk,
  type: ColumnType,
  scale: number | undefined,
  offset: number,
): unknown {
  if (isNullAt(chunk, offset)) return null;
  switch (chunk.kind) {
    case 'int32': {
      const value = chunk.values[offset] as number;
      return type === 'date' ? civilFromDays(value) : value;
    }
    case 'float64': {
      const exact = chunk.exact?.get(offset);
      if (exact !== undefined) return exact;
      const value = chunk.values[offset] as number;
      if (type === 'date') return civilFromDays(value);
      return type === 'bigint' || type === 'decimal'
        ? formatStoredNumber(value, type, scale)
        : value;
    }
    case 'decimal':
      return chunk.exact?.get(offset) ?? formatUnits(chunk.values[offset] as number, chunk.scale);
    case 'bool':
      return chunk.values[offset] === 1;
    case 'dict':
      return chunk.dictionary[chunk.codes[offset] as number];
    case 'bytes': {
      const start = chunk.offsets[offset] as number;
      const end = chunk.offsets[offset + 1] as number;
      return chunk.encoding === 'raw'
        ? Buffer.from(chunk.bytes.subarray(start, end))
        : chunk.bytes.toString('utf8', start, end);
    }
  }
}
