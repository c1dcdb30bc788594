import { Worker } from 'node:worker_threads';
import { describe, expect, it } from 'vitest';
import { exportGeneration, importGeneration } from '../src/storage/shared-generation.ts';
import { runQuery, shop } from './fixtures.ts';

const QUERIES = [
  'customers { * orders { * } } ORDER BY id',
  "orders (status = 'paid') { id total customer { name } } ORDER BY total DESC",
  'orders { status COUNT(*) SUM(total) }',
  "customers (name LIKE 'B%') { id country }",
];

/** What `postMessage` does to a value: the structured clone, through a real worker port. */
async function throughWorker<T>(value: T): Promise<T> {
  const worker = new Worker(
    'const { parentPort } = require("node:worker_threads"); parentPort.once("message", (v) => parentPort.postMessage(v));',
    { eval: true },
  );
  try {
    const reply = new Promise<T>((resolve) => worker.once('message', resolve));
    worker.postMessage(value);
    return await reply;
  } finally {
    await worker.terminate();
  }
}

describe('a generation exported for another thread', () => {
  it('answers every query as the original does after a structured clone', async () => {
    const { schema, generation } = shop();
    const imported = importGeneration(schema, await throughWorker(exportGeneration(generation)));
    expect(imported.id).toBe(generation.id);
    expect(imported.createdAt).toBe(generation.createdAt);
    for (const text of QUERIES) {
      expect(runQuery(schema, imported, text).data).toEqual(
        runQuery(schema, generation, text).data,
      );
    }
  });
});
