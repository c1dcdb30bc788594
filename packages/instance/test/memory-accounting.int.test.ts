import { compileSchema, parseSchemaConfig } from '@replix/engine';
import { connectorFromUrl, type SourceConnector } from '@replix/sources';
import { testMariaDb } from '@replix/testkit/vitest';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { SnapshotController } from '../src/snapshot/snapshot-controller.ts';
import { createLogger } from '../src/start-instance.ts';
import { InstanceMetrics } from '../src/threads/metrics.ts';
import { QueryAdmission } from '../src/threads/query-admission.ts';
import { queryWorkingMemoryBytes } from '../src/threads/query-working-memory.ts';

const MiB = 1024 * 1024;
const never = () => new AbortController().signal;

/** Polls `check` on the event loop until it holds (no clock: the test runner's timeout bounds it). */
async function until(check: () => boolean): Promise<void> {
  while (!check()) await new Promise((resolve) => setImmediate(resolve));
}

describe('the memory cap counts query working memory', () => {
  let sourceUrl: string;
  const connectors: SourceConnector[] = [];

  beforeAll(async () => {
    const rows = Array.from({ length: 500 }, (_, i) => `(${i + 1}, 'row ${i + 1}')`).join(',');
    const db = await testMariaDb().createDatabase(
      `CREATE TABLE t (id INT PRIMARY KEY, v VARCHAR(40)); INSERT INTO t VALUES ${rows};`,
    );
    sourceUrl = db.url;
  });
  afterAll(async () => {
    for (const connector of connectors) await connector.close();
  });

  async function startController(memoryCapMb: number | null, heapLimitBytes = 256 * MiB) {
    const connector = connectorFromUrl(sourceUrl);
    connectors.push(connector);
    const schema = compileSchema(await connector.introspect(), parseSchemaConfig({}));
    const controller = new SnapshotController(connector, schema, {
      memoryCapMb,
      syncMode: 'poll',
      log: createLogger('silent'),
      heapLimitBytes,
    });
    await controller.start();
    return controller;
  }

  const oneInsert = (id: number) => async () =>
    new Map([['t', [{ op: 'insert', row: [id, 'new'] } as const]]]);

  it('holds a flush back while running queries fill the cap, then swaps it in', async () => {
    const controller = await startController(1);
    const snapshotBytes = controller.snapshotBytes();
    expect(snapshotBytes).toBeGreaterThan(0);
    expect(snapshotBytes).toBeLessThan(MiB);
    let inFlight = MiB - snapshotBytes; // the snapshot and these queries fill the cap exactly
    controller.countQueryMemory(() => inFlight);

    const flushed = controller.flush(oneInsert(1001));
    // The new generation waits, counted as snapshot so queries get less memory meanwhile.
    await until(() => controller.snapshotBytes() > snapshotBytes);
    expect(controller.current()?.swapCount).toBe(0);
    expect(controller.health()).toBe('ok');
    expect(controller.queryWorkingBytes()).toBe(
      queryWorkingMemoryBytes(
        { heapLimitBytes: 256 * MiB, memoryCapBytes: MiB },
        controller.snapshotBytes(),
      ),
    );

    inFlight = 0; // the queries end
    expect(await flushed).toBe(true);
    expect(controller.current()?.swapCount).toBe(1);
    expect(controller.current()?.generation.rowCounts()).toEqual({ t: 501 });
    expect(controller.health()).toBe('ok');
  });

  it('holds a reload back the same way, without refusing it as over the cap', async () => {
    const controller = await startController(1);
    let inFlight = MiB;
    controller.countQueryMemory(() => inFlight);
    const before = controller.snapshotBytes();
    const reloaded = controller.reload();
    await until(() => controller.snapshotBytes() > before);
    expect(controller.current()?.swapCount).toBe(0);
    inFlight = 0;
    await reloaded;
    expect(controller.current()?.swapCount).toBe(1);
    expect(controller.health()).toBe('ok');
  });

  it('swaps at once when the queries leave room', async () => {
    const controller = await startController(1);
    controller.countQueryMemory(() => 1024);
    expect(await controller.flush(oneInsert(2001))).toBe(true);
    expect(controller.current()?.swapCount).toBe(1);
  });

  it('still refuses a generation over the cap on its own', async () => {
    const controller = await startController(0.01);
    expect(controller.health()).toBe('cap_exceeded');
  });

  it('reports heap, cap and query working memory in /health/detail, fed by the admission gate', async () => {
    const controller = await startController(null, 512 * MiB);
    const admission = new QueryAdmission({
      maxConcurrent: 4,
      maxQueued: 4,
      workingMemoryBytes: () => controller.queryWorkingBytes(),
    });
    controller.countQueryMemory(() => admission.inFlightBytes);
    const held = await admission.acquire(3 * MiB, never());
    const memory = controller.detail().memory as Record<string, unknown>;
    expect(memory).toMatchObject({
      cap_mb: null,
      cap_exceeded: false,
      heap_limit_mb: 512,
      query_working_bytes: 3 * MiB,
      query_working_limit_bytes: Math.floor(512 * MiB - controller.snapshotBytes() - 51.2 * MiB),
    });
    expect(memory.heap_used_mb).toEqual(expect.any(Number));
    held.release();
    expect((controller.detail().memory as Record<string, unknown>).query_working_bytes).toBe(0);
  });

  it('exports queries running and queued and their working memory in /metrics', async () => {
    const controller = await startController(null, 512 * MiB);
    const admission = new QueryAdmission({
      maxConcurrent: 1,
      maxQueued: 4,
      workingMemoryBytes: () => controller.queryWorkingBytes(),
    });
    const metrics = new InstanceMetrics(controller, admission);
    const held = await admission.acquire(5 * MiB, never());
    const waiting = admission.acquire(MiB, never());
    const text = await metrics.registry.metrics();
    const value = (name: string) => Number(new RegExp(`^${name} (\\S+)$`, 'm').exec(text)?.[1]);
    expect(value('replix_queries_running')).toBe(1);
    expect(value('replix_queries_queued')).toBe(1);
    expect(value('replix_query_working_bytes')).toBe(5 * MiB);
    expect(value('replix_query_working_limit_bytes')).toBe(controller.queryWorkingBytes());
    expect(value('replix_heap_limit_bytes')).toBeGreaterThan(0);
    held.release();
    (await waiting).release();
  });
});
