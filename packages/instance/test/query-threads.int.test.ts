import { freshRequest } from '@replix/testkit';
import { testMariaDb } from '@replix/testkit/vitest';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { crashableQueryWorkers, startTestInstance, type TestInstance } from './instance-helpers.ts';
import { eventually } from './replication-harness.ts';

const queryPath = (text: string) => `/query?q=${encodeURIComponent(text)}`;

/** `replix_thread_queries_total` by thread, from the instance's `/metrics`. */
async function queriesByThread(served: TestInstance): Promise<Map<string, number>> {
  const metrics = await freshRequest(served.url, '/metrics', { key: served.adminKey });
  expect(metrics.status).toBe(200);
  const counts = new Map<string, number>();
  for (const match of metrics.body.matchAll(
    /^replix_thread_queries_total\{thread="(\d+)"\} (\d+)/gm,
  ))
    counts.set(match[1] ?? '', Number(match[2]));
  return counts;
}

function metricValue(text: string, line: string): number {
  const found = text.split('\n').find((l) => l.startsWith(`${line} `));
  return Number(found?.split(' ')[1] ?? Number.NaN);
}

describe('an instance with two query threads', () => {
  let db: Awaited<ReturnType<ReturnType<typeof testMariaDb>['createDatabase']>>;
  let served: TestInstance;

  beforeAll(async () => {
    db = await testMariaDb().createDatabase(
      'CREATE TABLE items (id INT PRIMARY KEY, name VARCHAR(40), price DECIMAL(10,2))',
    );
    const values = Array.from({ length: 200 }, (_, i) => `(${i + 1}, 'item ${i + 1}', ${i}.50)`);
    await db.exec(`INSERT INTO items VALUES ${values.join(',')}`);
    served = await startTestInstance(
      db.url,
      { sync: { mode: 'cdc', interval: 0.05 } },
      { replicationId: db.name, threads: 2 },
    );
  }, 60_000);

  afterAll(async () => {
    await served?.close();
    await db?.drop();
  });

  it('answers on both threads with the same results, and /metrics counts them together', async () => {
    const before = await freshRequest(served.url, '/metrics', { key: served.adminKey });
    const okBefore = metricValue(before.body, 'replix_queries_total{outcome="ok"}');
    const text = 'items (price > 100) { id name price } ORDER BY price DESC LIMIT 5';
    const answers = await Promise.all(
      Array.from({ length: 40 }, () =>
        freshRequest(served.url, queryPath(text), { key: served.key }),
      ),
    );
    const bodies = new Set(answers.map((a) => JSON.stringify(JSON.parse(a.body).data)));
    expect(answers.every((a) => a.status === 200)).toBe(true);
    expect(bodies.size).toBe(1);
    const byThread = await queriesByThread(served);
    expect(byThread.get('0')).toBeGreaterThan(0);
    expect(byThread.get('1')).toBeGreaterThan(0);
    const after = await freshRequest(served.url, '/metrics', { key: served.adminKey });
    expect(metricValue(after.body, 'replix_queries_total{outcome="ok"}') - okBefore).toBe(40);
    // The snapshot's figures are the one snapshot's, not a sum over threads.
    expect(metricValue(after.body, 'replix_table_rows{table="items"}')).toBe(200);
  });

  it('gives the same ETag on every thread', async () => {
    const answers = await Promise.all(
      Array.from({ length: 20 }, () =>
        freshRequest(served.url, queryPath('items (id = 7) { name }'), { key: served.key }),
      ),
    );
    expect(new Set(answers.map((a) => a.headers.etag)).size).toBe(1);
  });

  it('serves a change on every thread at once: swap_count never goes back', async () => {
    const start = JSON.parse(
      (await freshRequest(served.url, queryPath('items (id = 1) { name }'), { key: served.key }))
        .body,
    ).meta.snapshot.swap_count as number;
    await db.exec("UPDATE items SET name = 'changed' WHERE id = 1");
    // Sequential requests on fresh connections (either thread may answer each), in order.
    const seen: { swap: number; name: string }[] = [];
    await eventually(async () => {
      for (let i = 0; i < 10; i++) {
        const body = JSON.parse(
          (
            await freshRequest(served.url, queryPath('items (id = 1) { name }'), {
              key: served.key,
            })
          ).body,
        );
        seen.push({ swap: body.meta.snapshot.swap_count, name: body.data[0].name });
      }
      expect(seen.at(-1)?.swap).toBeGreaterThan(start);
    });
    const swaps = seen.map((s) => s.swap);
    expect(swaps).toEqual([...swaps].sort((x, y) => x - y));
    for (const s of seen) if (s.swap > start) expect(s.name).toBe('changed');
    const highest = swaps.at(-1) ?? 0;
    const details = await Promise.all(
      Array.from({ length: 10 }, () =>
        freshRequest(served.url, '/health/detail', { key: served.adminKey }),
      ),
    );
    for (const detail of details) {
      expect(JSON.parse(detail.body).snapshot.swap_count).toBeGreaterThanOrEqual(highest);
    }
  });

  it('reloads, pauses and resumes from any thread', async () => {
    for (let i = 0; i < 6; i++) {
      const reloaded = await freshRequest(served.url, '/reload?wait=true', {
        method: 'POST',
        key: served.adminKey,
      });
      expect(reloaded.status).toBe(200);
      const swap = JSON.parse(reloaded.body).swap_count as number;
      // Once a reload answered, every thread serves its swap (or a later one).
      const answers = await Promise.all(
        Array.from({ length: 6 }, () =>
          freshRequest(served.url, queryPath('items (id = 2) { id }'), { key: served.key }),
        ),
      );
      for (const a of answers)
        expect(JSON.parse(a.body).meta.snapshot.swap_count).toBeGreaterThanOrEqual(swap);
    }
    const paused = await Promise.all(
      Array.from({ length: 6 }, () =>
        freshRequest(served.url, '/replication/pause', { method: 'POST', key: served.adminKey }),
      ),
    );
    expect(paused.every((p) => p.status === 200)).toBe(true);
    expect(served.instance.scheduler.paused).toBe(true);
    const resumed = await freshRequest(served.url, '/replication/resume', {
      method: 'POST',
      key: served.adminKey,
    });
    expect(resumed.status).toBe(200);
    expect(served.instance.scheduler.paused).toBe(false);
  });

  it('follows key changes on every thread', async () => {
    served.instance.keys.setAllowed({ keyIds: [], adminKeyIds: [] });
    await eventually(async () => {
      const answers = await Promise.all(
        Array.from({ length: 10 }, () =>
          freshRequest(served.url, queryPath('items (id = 2) { id }'), { key: served.key }),
        ),
      );
      expect(answers.map((a) => a.status)).toEqual(Array(10).fill(401));
    });
  });
});

describe('a query thread that dies', () => {
  it('is restarted, and the instance serves throughout on the main thread', async () => {
    const db = await testMariaDb().createDatabase('CREATE TABLE t (id INT PRIMARY KEY)');
    await db.exec('INSERT INTO t VALUES (1), (2)');
    const workers = crashableQueryWorkers();
    const served = await startTestInstance(
      db.url,
      {},
      { threads: 2, newQueryWorker: workers.newQueryWorker },
    );
    try {
      const threads = served.instance.threads;
      expect(threads).not.toBeNull();
      await workers.crash(1);
      await eventually(async () => {
        expect(threads?.restarts).toBe(1);
        const byThread = await queriesOnFreshConnections(served);
        expect(byThread.every((status) => status === 200)).toBe(true);
        expect((await queriesByThread(served)).get('1')).toBeGreaterThan(0);
      });
    } finally {
      await served.close();
      await db.drop();
    }
  }, 60_000);
});

describe('closing an instance with query threads', () => {
  it('stops every thread listening and ends', async () => {
    const db = await testMariaDb().createDatabase('CREATE TABLE t (id INT PRIMARY KEY)');
    const served = await startTestInstance(db.url, {}, { threads: 3 });
    const statuses = await queriesOnFreshConnections(served);
    expect(statuses.every((status) => status === 200)).toBe(true);
    await served.close();
    await expect(freshRequest(served.url, '/health')).rejects.toThrow();
    await db.drop();
  }, 60_000);
});

async function queriesOnFreshConnections(served: TestInstance): Promise<number[]> {
  const answers = await Promise.all(
    Array.from({ length: 20 }, () =>
      freshRequest(served.url, queryPath('t { id }'), { key: served.key }),
    ),
  );
  return answers.map((a) => a.status);
}
