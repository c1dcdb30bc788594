import type { CompiledTable, SourceColumn } from '@replix/engine';
import { type TableData, TableLoader } from '@replix/engine/storage';
import type { SnapshotReader } from '@replix/sources';

/** The source columns an instance reads for a compiled table, in stored order. */
export function sourceColumnsOf(table: CompiledTable): SourceColumn[] {
  return table.columns.map((column) => ({
    name: column.sourceName,
    type: column.type,
    nullable: column.nullable,
    sourceType: column.sourceType,
    ...(column.scale !== undefined ? { scale: column.scale } : {}),
    ...(column.elementType !== undefined ? { elementType: column.elementType } : {}),
  }));
}

/**
 * Reads one table of a snapshot into its columnar chunks, on whichever thread holds `reader`:
 * the same code reads on the main thread and in a load worker. `onRows` hears each batch's
 * row count; `signal` stops the read between batches.
 */
export async function readTableData(
  reader: SnapshotReader,
  table: CompiledTable,
  onRows: (rows: number) => void,
  signal?: AbortSignal,
): Promise<TableData> {
  const loader = new TableLoader(table);
  for await (const batch of reader.readTable({
    table: table.sourceName,
    columns: sourceColumnsOf(table),
    where: table.where,
  })) {
    signal?.throwIfAborted();
    loader.appendRows(batch);
    onRows(batch.length);
  }
  return loader.finish();
}
