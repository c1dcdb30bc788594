import { getBit } from './bitmap.ts';
import type { ColumnChunk } from './column-chunk.ts';

/** Row ids are `chunk index * CHUNK_ROWS + offset`, so a chunk may hold fewer rows than that. */
export const CHUNK_BITS = 16;
export const CHUNK_ROWS = 1 << CHUNK_BITS;
export const OFFSET_MASK = CHUNK_ROWS - 1;

/** The rows of one chunk, one `ColumnChunk` per stored column. Immutable. */
export interface Chunk {
  readonly length: number;
  readonly columns: readonly ColumnChunk[];
  /** Rows deleted since the chunk was built (bit set = deleted); null when none is. */
  readonly deleted: Uint8Array | null;
  readonly deletedCount: number;
}

/** One table's rows in one generation. Immutable; later generations share unchanged chunks. */
export interface TableData {
  readonly chunks: readonly Chunk[];
  /** Rows not deleted. */
  readonly liveRows: number;
}

export function isLive(chunk: Chunk, offset: number): boolean {
  const deleted = chunk.deleted;
  return deleted === null || !getBit(deleted, offset);
}

/** Calls `visit` with the id of every live row, in row-id order. */
export function forEachLiveRow(data: TableData, visit: (rowId: number) => void): void {
  const chunks = data.chunks;
  for (let c = 0; c < chunks.length; c++) {
    const chunk = chunks[c] as Chunk;
    const base = c << CHUNK_BITS;
    const deleted = chunk.deleted;
    for (let offset = 0; offset < chunk.length; offset++) {
      if (deleted !== null && getBit(deleted, offset)) {
        continue;
      }
      visit(base + offset);
    }
  }
}
