import { Worker } from 'node:worker_threads';
import { describe, expect, it } from 'vitest';
import type { CompiledTable } from '../src/schema/compiled-schema.ts';
import { exportChunk, importChunk, type SharedChunk, TableLoader } from '../src/storage-surface.ts';

const column = (name: string, type: string) => ({ name, sourceName: name, type, nullable: true });
const table = {
  name: 't',
  columns: [column('id', 'int'), column('label', 'string'), column('big', 'bigint')],
} as unknown as CompiledTable;

/** Posts `value` to a worker that sends it straight back. */
async function roundTrip<T>(value: T): Promise<T> {
  const worker = new Worker(
    'const { parentPort } = require("node:worker_threads"); parentPort.once("message", (v) => parentPort.postMessage(v));',
    { eval: true },
  );
  try {
    const back = new Promise<T>((resolve) => worker.once('message', resolve));
    worker.postMessage(value);
    return await back;
  } finally {
    await worker.terminate();
  }
}

describe('chunks handed to another thread (a load worker’s)', () => {
  it('come back the same, sharing their arrays, text as a Buffer and exact numbers whole', async () => {
    const loader = new TableLoader(table);
    loader.appendRows(
      Array.from({ length: 5000 }, (_, i) => [
        i,
        `label ${i}`,
        i % 3 === 0 ? null : '9007199254740993',
      ]),
    );
    const data = loader.finish();
    const back = (await roundTrip(data.chunks.map(exportChunk))) as SharedChunk[];
    const chunks = back.map(importChunk);
    expect(chunks).toHaveLength(data.chunks.length);
    const [ids, labels, bigs] = chunks[0]?.columns ?? [];
    const [sentIds] = data.chunks[0]?.columns ?? [];
    if (ids?.kind !== 'int32' || sentIds?.kind !== 'int32') throw new Error('ids not int32');
    // Shared, not copied: a write on this side shows through the other side's view.
    expect(ids.values.buffer).toBeInstanceOf(SharedArrayBuffer);
    sentIds.values[1] = 4242;
    expect(ids.values[1]).toBe(4242);
    if (labels?.kind !== 'bytes') throw new Error('labels not flat text');
    expect(Buffer.isBuffer(labels.bytes)).toBe(true);
    expect(labels.bytes.toString('utf8', labels.offsets[7], labels.offsets[8])).toBe('label 7');
    if (bigs?.kind !== 'float64') throw new Error('bigs not float64');
    expect(bigs.exact?.get(1)).toBe('9007199254740993');
    expect(bigs.exact?.get(3)).toBeUndefined();
  });
});
