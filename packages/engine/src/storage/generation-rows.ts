import { readCanonical } from './column-reader.ts';
import { canonicalToComparable } from './comparable.ts';
import { type Generation, indexName, type TableSnapshot } from './generation.ts';
import { rowKey, valuesKey } from './row-key.ts';
import { CHUNK_BITS, type Chunk, forEachLiveRow, isLive, OFFSET_MASK } from './table-data.ts';

function readRow(snapshot: TableSnapshot, rowId: number): unknown[] | null {
  const chunk = snapshot.data.chunks[rowId >>> CHUNK_BITS] as Chunk | undefined;
  const offset = rowId & OFFSET_MASK;
  if (!chunk || !isLive(chunk, offset)) return null;
  return snapshot.schema.columns.map((column, c) =>
    readCanonical(chunk.columns[c]!, column.type, column.scale, offset),
  );
}

/**
 * The live rows of `table` whose `columns` (stored positions) equal `values` (canonical), in
 * canonical form and stored column order, found through the index over exactly those columns;
 * null when the generation keeps no such index. A NULL among `values` matches no row.
 */
export function rowsWithValues(
  generation: Generation,
  table: string,
  columns: readonly number[],
  values: readonly unknown[],
): unknown[][] | null {
  const snapshot = generation.table(table);
  const index = snapshot.indexes.get(indexName(columns));
  if (!index) return null;
  const key = valuesKey(
    columns.map((c, i) => canonicalToComparable(snapshot.schema.columns[c]!.type, values[i])),
  );
  if (key === null) return [];
  const rows: unknown[][] = [];
  for (const rowId of index.all(key)) {
    const row = readRow(snapshot, rowId);
    if (row) rows.push(row);
  }
  return rows;
}

/**
 * Calls `visit` with every live row of `table` (canonical, stored column order) and the index
 * key of its `columns` (null when one of them is NULL), for lookups no index serves.
 */
export function forEachRowKeyed(
  generation: Generation,
  table: string,
  columns: readonly number[],
  visit: (key: ReturnType<typeof rowKey>, row: unknown[]) => void,
): void {
  const snapshot = generation.table(table);
  forEachLiveRow(snapshot.data, (rowId) => {
    const chunk = snapshot.data.chunks[rowId >>> CHUNK_BITS] as Chunk;
    const row = readRow(snapshot, rowId);
    if (row) visit(rowKey(chunk.columns, columns, rowId & OFFSET_MASK), row);
  });
}
