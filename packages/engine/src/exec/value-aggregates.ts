import type { CompiledColumn } from '../schema/compiled-schema.ts';
import type { ColumnChunk, DecimalChunk } from '../storage/column-chunk.ts';
import { isNullAt, readCanonical, readComparable } from '../storage/column-reader.ts';
import type { Comparable } from '../storage/comparable.ts';
import type { DistinctValues } from './distinct-values.ts';
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

/** A DECIMAL chunk's units at `offset` when it keeps no text for it; undefined otherwise. */
function unitsAt(chunk: DecimalChunk, offset: number): number | undefined {
  return chunk.exact?.get(offset) === undefined ? chunk.values[offset] : undefined;
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
  // Two DECIMALs whose doubles tie may still differ past a double's 17 digits: their units,
  // exact integers, tell; else their texts.
  if (chunk.kind === 'decimal' && bestChunk.kind === 'decimal' && chunk.scale === bestChunk.scale) {
    const units = unitsAt(chunk, offset);
    const bestUnits = unitsAt(bestChunk, bestOffset);
    if (units !== undefined && bestUnits !== undefined) {
      return units < bestUnits ? -1 : units > bestUnits ? 1 : 0;
    }
  }
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

/**
 * The rows of one chunk an aggregation visits, column at a time: row i is at `offsets[i]` and
 * belongs to group `groupIds[i]` (its index among the aggregation's groups), for i < `count`.
 */
export interface ChunkRows {
  readonly offsets: Uint32Array;
  readonly groupIds: Int32Array;
  readonly count: number;
  /** Groups the aggregation has formed so far: every id is below it. */
  readonly groups: number;
}

/**
 * MIN or MAX over one chunk's rows, per group: the group ids the chunk has a non-NULL value for
 * and, by id, the offset of its smallest (`min`) or largest. Values are compared straight from
 * the typed array: 32-bit integers and dates, doubles, a DECIMAL's units (one scale in a chunk).
 * Null when the chunk holds its values otherwise (text, booleans, source texts beside numbers):
 * they go row by row.
 */
export function chunkExtremes(
  values: ColumnChunk,
  min: boolean,
  rows: ChunkRows,
): { readonly ids: number[]; readonly offsets: Int32Array } | null {
  if (values.kind !== 'int32' && values.kind !== 'float64' && values.kind !== 'decimal') {
    return null;
  }
  if (values.kind !== 'int32' && values.exact !== null) return null;
  const data = values.values;
  const nulls = values.nulls;
  const best = new Float64Array(rows.groups);
  const bestOffsets = new Int32Array(rows.groups).fill(-1);
  const ids: number[] = [];
  const { offsets, groupIds, count } = rows;
  for (let i = 0; i < count; i++) {
    const offset = offsets[i]!;
    // `getBit` of storage/bitmap.ts written out: in a per-row scan the call costs ~10%.
    if (nulls !== null && (nulls[offset >>> 3]! & (1 << (offset & 7))) !== 0) continue;
    const value = data[offset]!;
    const id = groupIds[i]!;
    const at = bestOffsets[id]!;
    if (at < 0) ids.push(id);
    else if (min ? value >= best[id]! : value <= best[id]!) continue;
    best[id] = value;
    bestOffsets[id] = offset;
  }
  return { ids, offsets: bestOffsets };
}

/**
 * Adds one chunk's distinct keys (`distinctKey`) to each row's group's set (`setOf` its id):
 * straight from the typed array or dictionary where the key is the stored value. How many keys
 * were new, and their characters.
 */
export function addDistinctKeys(
  column: CompiledColumn,
  values: ColumnChunk,
  rows: ChunkRows,
  setOf: (groupId: number) => DistinctValues,
): { added: number; chars: number } {
  const { offsets, groupIds, count } = rows;
  let added = 0;
  let chars = 0;
  const plain =
    values.kind === 'int32' ||
    (values.kind === 'float64' && values.exact === null && column.type !== 'decimal');
  const nulls = values.nulls;
  let lastId = -1;
  let set: DistinctValues | undefined;
  const seen = (id: number) => {
    if (id !== lastId) {
      set = setOf(id);
      lastId = id;
    }
    return set as DistinctValues;
  };
  if (plain) {
    // Numbers straight from the typed array: the common case, kept tight.
    const data = values.values as Int32Array | Float64Array;
    for (let i = 0; i < count; i++) {
      const offset = offsets[i]!;
      if (nulls !== null && (nulls[offset >>> 3]! & (1 << (offset & 7))) !== 0) continue;
      if (seen(groupIds[i]!).addNumber(data[offset]!)) added++;
    }
    return { added, chars };
  }
  for (let i = 0; i < count; i++) {
    const offset = offsets[i]!;
    let key: Comparable | null;
    if (values.kind === 'dict') {
      if (nulls !== null && (nulls[offset >>> 3]! & (1 << (offset & 7))) !== 0) continue;
      key = values.dictionary[values.codes[offset]!] as string;
    } else {
      key = distinctKey(column, values, offset);
      if (key === null) continue;
    }
    if (!seen(groupIds[i]!).add(key)) continue;
    added++;
    if (typeof key === 'string') chars += key.length;
  }
  return { added, chars };
}
