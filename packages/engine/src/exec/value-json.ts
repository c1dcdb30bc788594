import type { CompiledColumn } from '../schema/compiled-schema.ts';
import { civilFromDays, timestampDigits, timestampText } from '../storage/civil-date.ts';
import { formatStoredNumber } from '../storage/column-builder.ts';
import type { ColumnChunk, DictChunk } from '../storage/column-chunk.ts';
import { isNullAt } from '../storage/column-reader.ts';
import { formatUnits } from '../storage/decimal-units.ts';

/** JSON text of each dictionary entry, computed once per chunk. */
const quotedDictionaries = new WeakMap<DictChunk, string[]>();

function quotedDictionary(chunk: DictChunk): string[] {
  let quoted = quotedDictionaries.get(chunk);
  if (!quoted) {
    quoted = chunk.dictionary.map((entry) => JSON.stringify(entry));
    quotedDictionaries.set(chunk, quoted);
  }
  return quoted;
}

function numberJson(value: number): string {
  return Number.isFinite(value) ? String(value) : 'null';
}

/**
 * The JSON text of one stored value (docs/instance-api.md, "Data types"): numbers with every digit
 * the source had, dates as `YYYY-MM-DD`, timestamps as ISO 8601 UTC with milliseconds (or
 * microseconds for a column of precision 4..6), times as seconds with up to six decimals,
 * binary as lowercase hex, JSON columns as their text in a string.
 */
export function valueJson(column: CompiledColumn, chunk: ColumnChunk, offset: number): string {
  if (isNullAt(chunk, offset)) return 'null';
  switch (chunk.kind) {
    case 'int32': {
      const value = chunk.values[offset] as number;
      return column.type === 'date' ? `"${civilFromDays(value)}"` : String(value);
    }
    case 'float64': {
      const value = chunk.values[offset] as number;
      switch (column.type) {
        case 'timestamp':
          return Number.isFinite(value)
            ? `"${timestampText(value, timestampDigits(column.precision, value))}"`
            : 'null';
        case 'date':
          return `"${civilFromDays(value)}"`;
        case 'bigint':
        case 'decimal': {
          const exact = chunk.exact?.get(offset);
          if (exact !== undefined) return exact;
          return Number.isFinite(value)
            ? formatStoredNumber(value, column.type, column.scale)
            : 'null';
        }
        default:
          return numberJson(value);
      }
    }
    case 'decimal':
      return chunk.exact?.get(offset) ?? formatUnits(chunk.values[offset] as number, chunk.scale);
    case 'bool':
      return chunk.values[offset] === 1 ? 'true' : 'false';
    case 'dict':
      // An array's stored text already is its JSON: written as is, not as a string.
      if (column.type === 'array') return chunk.dictionary[chunk.codes[offset] as number] as string;
      return quotedDictionary(chunk)[chunk.codes[offset] as number] as string;
    case 'bytes': {
      const start = chunk.offsets[offset] as number;
      const end = chunk.offsets[offset + 1] as number;
      if (chunk.encoding === 'raw') return `"${chunk.bytes.toString('hex', start, end)}"`;
      const text = chunk.bytes.toString('utf8', start, end);
      return column.type === 'array' ? text : JSON.stringify(text);
    }
  }
}
