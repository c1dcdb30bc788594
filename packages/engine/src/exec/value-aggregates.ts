import type { CompiledColumn } from '../schema/compiled-schema.ts';
import type { ColumnChunk } from '../storage/column-chunk.ts';
import { isNullAt, readCanonical, readComparable } from '../storage/column-reader.ts';
import type { Comparable } from '../storage/comparable.ts';
import { compareDecimals, type Decimal, decimalKey, parseDecimal } from './exact-decimal.ts';
import { compareSortValues } from './sort-rows.ts';

/**
 * What MIN, MAX and COUNT(DISTINCT) read of a value: MIN and MAX compare values in ORDER BY's
 * order (numbers by value, text by code point), DECIMALs exactly where their doubles tie;
 * COUNT(DISTINCT) keys each value by one form per number, so `1.50` and `1.5` count once, as
 * in SQL.
 */

/** The exact value of a DECIMAL at `offset` (null for NULL or a NaN/Infinity numeric). */
function exactDecimal(column: CompiledColumn, chunk: ColumnChunk, offset: number): Decimal | null {
  const text = readCanonical(chunk, column.type, column.scale, offset);
  return text === null ? null : parseDecimal(String(text));
}

/**
 * Orders the value at (`chunk`, `offset`), read as `value`, against the extreme kept so far
 * (`best` at (`bestChunk`, `bestOffset`)): negative when it sorts first.
 */
export function compareExtreme(
  column: CompiledColumn,
  value: Comparable,
  chunk: ColumnChunk,
  offset: number,
  best: Comparable,
  bestChunk: ColumnChunk,
  bestOffset: number,
): number {
  const order = compareSortValues(value, best, false);
  if (order !== 0 || column.type !== 'decimal') return order;
  // Two DECIMALs whose doubles tie may still differ past a double's 17 digits.
  const exact = exactDecimal(column, chunk, offset);
  const bestExact = exactDecimal(column, bestChunk, bestOffset);
  return exact === null || bestExact === null ? 0 : compareDecimals(exact, bestExact);
}

/**
 * The value at `offset` as COUNT(DISTINCT) tells values apart (null for NULL): the compared
 * value, or for a DECIMAL its exact value as one text, so digits a double drops still count.
 */
export function distinctKey(
  column: CompiledColumn,
  chunk: ColumnChunk,
  offset: number,
): Comparable | null {
  if (isNullAt(chunk, offset)) return null;
  if (column.type !== 'decimal') return readComparable(chunk, offset);
  if (chunk.kind === 'decimal' && chunk.exact?.get(offset) === undefined) {
    // Units of a fixed scale, a safe integer: the key without a bigint.
    let units = chunk.values[offset] as number;
    let scale = chunk.scale;
    while (scale > 0 && units % 10 === 0) {
      units /= 10;
      scale--;
    }
    return `${units}e-${scale}`;
  }
  const exact = exactDecimal(column, chunk, offset);
  return exact === null ? readComparable(chunk, offset) : decimalKey(exact);
}
