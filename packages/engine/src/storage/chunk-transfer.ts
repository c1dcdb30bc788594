import type { ColumnChunk } from './column-chunk.ts';
import type { Chunk } from './table-data.ts';

/**
 * The array buffers a `postMessage` of `chunks` can transfer instead of copying: those a view
 * of the chunks owns whole. A view into a shared pool (small Buffers) or a SharedArrayBuffer is
 * left out: the first would detach its neighbours, the second is shared anyway.
 */
export function chunkTransferList(chunks: readonly Chunk[]): ArrayBuffer[] {
  const buffers = new Set<ArrayBuffer>();
  for (const chunk of chunks) {
    if (chunk.deleted) add(buffers, chunk.deleted);
    for (const column of chunk.columns) {
      for (const value of Object.values(column)) if (ArrayBuffer.isView(value)) add(buffers, value);
    }
  }
  return [...buffers];
}

function add(buffers: Set<ArrayBuffer>, view: ArrayBufferView): void {
  const buffer = view.buffer;
  if (!(buffer instanceof ArrayBuffer)) return;
  if (view.byteOffset !== 0 || view.byteLength !== buffer.byteLength) return;
  buffers.add(buffer);
}

/** A structured clone turns a Buffer into a plain Uint8Array: give text chunks theirs back. */
function withBuffer(column: ColumnChunk): ColumnChunk {
  if (column.kind !== 'bytes' || Buffer.isBuffer(column.bytes)) return column;
  const bytes = column.bytes as Uint8Array;
  return { ...column, bytes: Buffer.from(bytes.buffer, bytes.byteOffset, bytes.byteLength) };
}

/** A chunk as another thread posted it, made whole again on this one. */
export function receivedChunk(chunk: Chunk): Chunk {
  return { ...chunk, columns: chunk.columns.map(withBuffer) };
}
