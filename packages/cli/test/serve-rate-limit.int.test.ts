import { freshRequest } from '@replix/testkit';
import { testMariaDb } from '@replix/testkit/vitest';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { serveProcess } from './serve-process.ts';

describe('replix serve with REPLIX_RATE_LIMIT', () => {
  let sourceUrl: string;
  let drop: () => Promise<void>;

  beforeAll(async () => {
    const db = await testMariaDb().createDatabase(
      'CREATE TABLE t (id INT PRIMARY KEY); INSERT INTO t VALUES (1), (2);',
    );
    sourceUrl = db.url;
    drop = () => db.drop();
  }, 60_000);
  afterAll(() => drop?.());

  it("holds a key's limit across two query threads (REPLIX_THREADS=2)", async () => {
    const server = await serveProcess(['--source', sourceUrl], {
      ...process.env,
      REPLIX_LOG_LEVEL: 'warn',
      REPLIX_THREADS: '2',
      // 20 requests per 10 minutes: nothing comes back while the test runs.
      REPLIX_RATE_LIMIT: '20',
      REPLIX_RATE_LIMIT_WINDOW: '600',
    });
    try {
      const { url, apiKey = '', adminKey = '' } = server.ready;
      // The main thread starts following the binlog just after the ready line (queries, a
      // connection): the burst waits for that, so both threads are free to answer it. The
      // health route is not a query route, so this spends none of the keys' budget.
      for (const deadline = Date.now() + 30_000; ; ) {
        const detail = await freshRequest(url, '/health/detail', { key: adminKey });
        if (JSON.parse(detail.body).replication?.state === 'streaming') break;
        if (Date.now() > deadline) throw new Error(`replication did not start: ${detail.body}`);
        await new Promise((resolve) => setTimeout(resolve, 100));
      }
      const answers = await Promise.all(
        Array.from({ length: 60 }, () =>
          freshRequest(url, '/query?q=t%20%7B%20id%20%7D', { key: apiKey }),
        ),
      );
      expect(answers.filter((a) => a.status === 200)).toHaveLength(20);
      const refused = answers.filter((a) => a.status === 429);
      expect(refused).toHaveLength(40);
      for (const answer of refused) {
        expect(JSON.parse(answer.body).error.code).toBe('too_many_requests');
        expect(Number(answer.headers['retry-after'])).toBeGreaterThanOrEqual(1);
        expect(answer.headers['ratelimit-policy']).toBe('"default";q=20;w=600');
      }
      // Both threads answered some of the 20: the count is the instance's, not a thread's.
      const metrics = await freshRequest(url, '/metrics', { key: adminKey });
      expect(metrics.status).toBe(200);
      const byThread = [
        ...metrics.body.matchAll(/^replix_thread_queries_total\{thread="(\d)"\} (\d+)/gm),
      ];
      expect(byThread.map((match) => Number(match[2])).reduce((sum, n) => sum + n, 0)).toBe(20);
      for (const match of byThread) expect(Number(match[2])).toBeGreaterThan(0);
      expect(byThread).toHaveLength(2);
    } finally {
      expect(await server.stop()).toBe(0);
    }
  }, 120_000);

  it('refuses a rate limit that is not a whole number, naming the variable', async () => {
    const started = serveProcess(['--source', sourceUrl], {
      ...process.env,
      REPLIX_RATE_LIMIT: 'lots',
    });
    await expect(started).rejects.toThrow(/REPLIX_RATE_LIMIT.*whole number of requests/);
  }, 60_000);
});
