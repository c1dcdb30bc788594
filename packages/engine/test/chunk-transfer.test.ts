import { Worker } from 'node:worker_threads';
import { describe, expect, it } from 'vitest';
import type { CompiledTable } from '../src/schema/compiled-schema.ts';
import { chunkTransferList, receivedChunk, TableLoader } from '../src/storage-surface.ts';

const column = (name: string, type: string) => ({ name, sourceName: name, type, nullable: true });
const table = {
  name: 't',
  columns: [column('id', 'int'), column('label', 'string'), column('big', 'bigint')],
} as unknown as CompiledTable;

/** Posts `value` to a worker that sends it straight back, with `transfer`. */
async function roundTrip<T>(value: T, transfer: ArrayBuffer[]): Promise<T> {
  const worker = new Worker(
    'const { parentPort } = require("node:worker_threads"); parentPort.once("message", (v) => parentPort.postMessage(v));',
    { eval: true },
  );
  try {
    const back = new Promise<T>((resolve) => worker.once('message', resolve));
    worker.postMessage(value, transfer);
    return await back;
  } finally {
    await worker.terminate();
  }
}

describe('chunks handed to another thread', () => {
  it('transfers the buffers a chunk owns whole and comes back the same, text as a Buffer', async () => {
    const loader = new TableLoader(table);
    loader.appendRows(
      Array.from({ length: 5000 }, (_, i) => [
        i,
        `label ${i}`,
        i % 3 === 0 ? null : '9007199254740993',
      ]),
    );
    const data = loader.finish();
    const expected = structuredClone(data);
    const transfer = chunkTransferList(data.chunks);
    expect(transfer.length).toBeGreaterThan(0);
    const back = await roundTrip(data, transfer);
    // Transferred: the sender's arrays are detached, nothing was copied.
    for (const buffer of transfer) expect(buffer.byteLength).toBe(0);
    const chunks = back.chunks.map(receivedChunk);
    const text = chunks[0]?.columns[1];
    if (text?.kind === 'bytes') expect(Buffer.isBuffer(text.bytes)).toBe(true);
    // The copy made before sending has been through a structured clone too.
    expect(chunks).toEqual(expected.chunks.map(receivedChunk));
  });

  it('leaves out a view into a pool another value shares', () => {
    const pooled = Buffer.from('small'); // from Node's shared 8 KiB pool
    const chunk = {
      length: 1,
      deleted: null,
      deletedCount: 0,
      columns: [
        {
          kind: 'bytes' as const,
          encoding: 'utf8' as const,
          bytes: pooled,
          offsets: new Uint32Array([0, 5]),
          nulls: null,
        },
      ],
    };
    const transfer = chunkTransferList([chunk]);
    expect(transfer).toHaveLength(1);
    expect(transfer[0]).toBe(chunk.columns[0]?.offsets.buffer);
  });
});
