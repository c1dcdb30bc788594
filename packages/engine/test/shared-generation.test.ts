import { Worker } from 'node:worker_threads';
import { describe, expect, it } from 'vitest';
import { compileSchema } from '../src/schema/compile-schema.ts';
import { parseSchemaConfig } from '../src/schema/schema-config.ts';
import type { Generation } from '../src/storage/generation.ts';
import { nextGeneration } from '../src/storage/generation-builder.ts';
import {
  exportGeneration,
  importGeneration,
  type SharedGeneration,
} from '../src/storage/shared-generation.ts';
import { buildGeneration, runQuery, shop } from './fixtures.ts';
import { ledgerChanges, ledgerRows, ledgerSource } from './ledger-fixture.ts';

const QUERIES = [
  'customers { * orders { * } } ORDER BY id',
  "orders (status = 'paid') { id total customer { name } } ORDER BY total DESC",
  'orders { status COUNT(*) SUM(total) }',
  "customers (name LIKE 'B%') { id country }",
];

const LEDGER_QUERIES = [
  'accounts { * entries { id amount note } } ORDER BY num LIMIT 40',
  "accounts (region = '日本' AND num = 3) { name balance avatar active entries { id } }",
  'accounts (balance > 4611686018427387904) { region num balance } ORDER BY num',
  'entries (id = 4611686018427387914) { id amount accounts { name } }',
  'entries (id IN (7, 9, 4611686018427388004, 1234)) { id region num } ORDER BY id',
  'entries (region IS NULL) { id } ORDER BY id LIMIT 30',
  'entries { region COUNT(*) SUM(amount) } ORDER BY region',
  "entries (note = 'note 7' AND amount IS NOT NULL) { id accounts { avatar } } ORDER BY id DESC LIMIT 25",
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

/** Every typed array reachable from `value` (a shared generation), with where it was found. */
function typedArrays(value: unknown, path = '', found: [string, ArrayBufferView][] = []) {
  if (ArrayBuffer.isView(value)) found.push([path, value]);
  else if (value instanceof Map) for (const [k, v] of value) typedArrays(v, `${path}.${k}`, found);
  else if (Array.isArray(value))
    for (let i = 0; i < value.length; i++) typedArrays(value[i], `${path}[${i}]`, found);
  else if (value !== null && typeof value === 'object')
    for (const [k, v] of Object.entries(value)) typedArrays(v, `${path}.${k}`, found);
  return found;
}

const ledgerSchema = () => compileSchema(ledgerSource, parseSchemaConfig({}));

/** The ledger over chunks of 64 rows, then `steps` batches of changes. */
function ledgerGenerations(steps: number): Generation[] {
  const schema = ledgerSchema();
  let generation = buildGeneration(schema, ledgerRows(300, 3000), 64);
  const generations = [generation];
  for (let step = 1; step <= steps; step++) {
    const changes = ledgerChanges(step, (step * 211) % 2500, 200, 300, 3000);
    generation = nextGeneration(generation, changes, step + 1);
    generations.push(generation);
  }
  return generations;
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

  it('keeps every column, bitmap and index array in shared memory, shared by the clone', async () => {
    // The shop's keys are numbers, the ledger's text and bigints: both index layouts.
    const exported = [
      exportGeneration(shop().generation),
      exportGeneration(ledgerGenerations(3).at(-1) as Generation),
    ];
    const clone = await throughWorker(exported);
    const originals = typedArrays(exported);
    const clones = typedArrays(clone);
    expect(clones.map(([path]) => path)).toEqual(originals.map(([path]) => path));
    // Columns of every kind, NULL and deleted bitmaps, and both index layouts are there.
    const paths = originals.map(([path]) => path).join('\n');
    for (const part of ['.values', '.codes', '.bytes', '.offsets', '.nulls', '.deleted'])
      expect(paths).toContain(part);
    for (const part of ['.slotKeys', '.slots', '.keyBytes', '.listRows'])
      expect(paths).toContain(part);
    for (const [path, array] of [...originals, ...clones]) {
      expect(array.buffer instanceof SharedArrayBuffer, path).toBe(true);
    }
    // Same memory, not a copy: a write to the original shows in the clone.
    originals.forEach(([path, original], i) => {
      const copy = (clones[i] as [string, ArrayBufferView])[1];
      if (original.byteLength === 0) return;
      const bytes = new Uint8Array(original.buffer, original.byteOffset, original.byteLength);
      const seen = new Uint8Array(copy.buffer, copy.byteOffset, copy.byteLength);
      const old = bytes[0] as number;
      bytes[0] = old ^ 0xff;
      expect(seen[0], path).toBe(old ^ 0xff);
      bytes[0] = old;
    });
  }, 60_000);

  it('answers as the original over many chunks, NULLs, exact numbers, binary and composite keys, after changes', async () => {
    const schema = ledgerSchema();
    const generations = ledgerGenerations(12);
    for (const generation of [generations[0], generations[5], generations[12]] as Generation[]) {
      const imported = importGeneration(schema, await throughWorker(exportGeneration(generation)));
      for (const text of LEDGER_QUERIES) {
        const expected = runQuery(schema, generation, text).data;
        expect(expected.length, text).toBeGreaterThan(0);
        expect(runQuery(schema, imported, text).data, text).toEqual(expected);
      }
    }
  }, 60_000);

  it('costs a worker a small fraction of its size to import, and answers there', async () => {
    const schema = ledgerSchema();
    const generation = buildGeneration(schema, ledgerRows(2000, 200_000), 65_536);
    const worker = new Worker(new URL('./import-worker.ts', import.meta.url), {
      workerData: { source: ledgerSource },
    });
    try {
      await new Promise((resolve) => worker.once('message', resolve));
      const reply = new Promise<{ growth: number; answers: unknown[] }>((resolve) =>
        worker.once('message', resolve),
      );
      const shared: SharedGeneration = exportGeneration(generation);
      worker.postMessage({ generation: shared, queries: LEDGER_QUERIES });
      const { growth, answers } = await reply;
      expect(generation.byteSize()).toBeGreaterThan(10_000_000);
      expect(growth).toBeLessThan(generation.byteSize() * 0.1);
      expect(answers).toEqual(
        LEDGER_QUERIES.map((text) => runQuery(schema, generation, text).data),
      );
    } finally {
      await worker.terminate();
    }
  }, 120_000);
});
