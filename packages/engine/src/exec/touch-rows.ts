import type { ColumnChunk } from '../storage/column-chunk.ts';
import type { TableSnapshot } from '../storage/generation.ts';
import { CHUNK_BITS, type Chunk, OFFSET_MASK } from '../storage/table-data.ts';
import type { PlanSubQuery } from './plan.ts';

/** Pages up to this many rows are read ahead by `touchRows`. */
export const TOUCHED_ROWS = 64;

/** Where `touchRows` leaves the sum of what it reads, so the reads are not optimised away. */
const touched = new Float64Array(1);

/**
 * Reads the stored values a page's rows will be written from, column by column, before they
 * are written row by row: rows scattered over a big table each miss the CPU caches, and reads
 * with nothing between them wait for their misses together instead of one after another. A
 * column's chunks are read by a loop for their kind (a column's chunks are mostly of one), so
 * each read sees one shape of chunk.
 */
export function touchRows(
  snapshot: TableSnapshot,
  sub: PlanSubQuery,
  rows: readonly number[],
): void {
  const chunks = snapshot.data.chunks;
  const firstChunk = chunks[(rows[0] as number) >>> CHUNK_BITS] as Chunk;
  let sum = 0;
  for (const output of sub.outputs) {
    if (output.kind !== 'column') continue;
    const index = output.column.index;
    switch ((firstChunk.columns[index] as ColumnChunk).kind) {
      case 'int32':
        sum += touchInt32s(chunks, index, rows);
        break;
      case 'float64':
      case 'decimal':
        sum += touchFloat64s(chunks, index, rows);
        break;
      case 'dict':
        sum += touchCodes(chunks, index, rows);
        break;
      case 'bytes':
        sum += touchBytes(chunks, index, rows);
        break;
      default:
        for (let i = 0; i < rows.length; i++) sum += touchValue(chunks, index, rows[i] as number);
    }
  }
  touched[0] = sum;
}

function touchInt32s(chunks: readonly Chunk[], index: number, rows: readonly number[]): number {
  let sum = 0;
  for (let i = 0; i < rows.length; i++) {
    const rowId = rows[i] as number;
    const chunk = (chunks[rowId >>> CHUNK_BITS] as Chunk).columns[index] as ColumnChunk;
    if (chunk.kind !== 'int32') {
      sum += touchValue(chunks, index, rowId);
      continue;
    }
    const offset = rowId & OFFSET_MASK;
    if (chunk.nulls !== null) sum += chunk.nulls[offset >>> 3] as number;
    sum += chunk.values[offset] as number;
  }
  return sum;
}

function touchFloat64s(chunks: readonly Chunk[], index: number, rows: readonly number[]): number {
  let sum = 0;
  for (let i = 0; i < rows.length; i++) {
    const rowId = rows[i] as number;
    const chunk = (chunks[rowId >>> CHUNK_BITS] as Chunk).columns[index] as ColumnChunk;
    if (chunk.kind !== 'float64' && chunk.kind !== 'decimal') {
      sum += touchValue(chunks, index, rowId);
      continue;
    }
    const offset = rowId & OFFSET_MASK;
    if (chunk.nulls !== null) sum += chunk.nulls[offset >>> 3] as number;
    sum += chunk.values[offset] as number;
  }
  return sum;
}

function touchCodes(chunks: readonly Chunk[], index: number, rows: readonly number[]): number {
  let sum = 0;
  for (let i = 0; i < rows.length; i++) {
    const rowId = rows[i] as number;
    const chunk = (chunks[rowId >>> CHUNK_BITS] as Chunk).columns[index] as ColumnChunk;
    if (chunk.kind !== 'dict') {
      sum += touchValue(chunks, index, rowId);
      continue;
    }
    const offset = rowId & OFFSET_MASK;
    if (chunk.nulls !== null) sum += chunk.nulls[offset >>> 3] as number;
    sum += chunk.codes[offset] as number;
  }
  return sum;
}

function touchBytes(chunks: readonly Chunk[], index: number, rows: readonly number[]): number {
  let sum = 0;
  for (let i = 0; i < rows.length; i++) {
    const rowId = rows[i] as number;
    const chunk = (chunks[rowId >>> CHUNK_BITS] as Chunk).columns[index] as ColumnChunk;
    if (chunk.kind !== 'bytes') {
      sum += touchValue(chunks, index, rowId);
      continue;
    }
    const offset = rowId & OFFSET_MASK;
    if (chunk.nulls !== null) sum += chunk.nulls[offset >>> 3] as number;
    sum += chunk.bytes[chunk.offsets[offset] as number] ?? 0;
  }
  return sum;
}

/** One value of any kind of chunk, for the chunks of another kind than a column's first. */
function touchValue(chunks: readonly Chunk[], index: number, rowId: number): number {
  const chunk = (chunks[rowId >>> CHUNK_BITS] as Chunk).columns[index] as ColumnChunk;
  const offset = rowId & OFFSET_MASK;
  const nulls = chunk.nulls === null ? 0 : (chunk.nulls[offset >>> 3] as number);
  switch (chunk.kind) {
    case 'dict':
      return nulls + (chunk.codes[offset] as number);
    case 'bytes':
      return nulls + (chunk.bytes[chunk.offsets[offset] as number] ?? 0);
    default:
      return nulls + (chunk.values[offset] as number);
  }
}
