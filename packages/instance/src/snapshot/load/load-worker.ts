/**
 * A load worker's thread: joins the snapshot the loading thread shares, then reads the tables
 * it is handed into columnar chunks (the decoding and building off the loading thread) and
 * posts each table's chunks back: their arrays are SharedArrayBuffers, so nothing is copied.
 */
import { type MessagePort, parentPort, workerData } from 'node:worker_threads';
import { exportChunk } from '@replix/engine/storage';
import type { SnapshotReader } from '@replix/sources';
import { joinSnapshot, prepareJoin } from '@replix/sources/join';
import { type LoadReply, type LoadRequest, postedError } from './load-messages.ts';
import { readTableData } from './read-table-data.ts';

function portOf(candidate: MessagePort | null): MessagePort {
  if (!candidate) throw new Error('load-worker.ts runs as a worker thread');
  return candidate;
}
const port = portOf(parentPort);
const post = (reply: LoadReply) => port.postMessage(reply);

/** Rows between progress messages: often enough for progress, rare enough to cost nothing. */
const PROGRESS_ROWS = 20_000;

let reader: SnapshotReader | null = null;

async function handle(request: LoadRequest): Promise<void> {
  switch (request.type) {
    case 'join':
      reader = await joinSnapshot(request.share);
      post({ type: 'joined' });
      return;
    case 'read': {
      if (!reader) throw new Error('a load worker reads only after joining');
      let pending = 0;
      const data = await readTableData(reader, request.table, (rows) => {
        pending += rows;
        if (pending < PROGRESS_ROWS) return;
        post({ type: 'rows', rows: pending });
        pending = 0;
      });
      if (pending > 0) post({ type: 'rows', rows: pending });
      post({ type: 'table', chunks: data.chunks.map(exportChunk), liveRows: data.liveRows });
      return;
    }
    case 'close':
      await reader?.close();
      reader = null;
      post({ type: 'closed' });
      port.close();
      return;
  }
}

port.on('message', (request: LoadRequest) => {
  handle(request).catch((error: unknown) => post({ type: 'failed', error: postedError(error) }));
});
await prepareJoin(String((workerData as { backend?: unknown } | undefined)?.backend));
post({ type: 'ready' });
