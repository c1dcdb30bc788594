/**
 * Issue 26: a brief overload must not end an SDK subscription. A real instance over MariaDB is
 * overloaded for about 2 s as the issue found it can be: clients that ask for a big answer and
 * never read it keep every turn to run a query (a `max_response_bytes` of 1 GiB makes each
 * query reserve so much of the working memory that only a few run at once), so every other
 * query waits out its time budget and is refused. Meanwhile the source keeps changing: the
 * live query's re-evaluation is refused (`query-error` or `query-retry`, as the instance sends
 * it), and a reconnect before the overload ends is refused with 429. The old SDK ended the
 * subscription at the `query-error`, so the app never saw the final state. The app must still end
 * with the source's final state, on the same subscription, with every result once and in order.
 */
import { once } from 'node:events';
import { connect, type Socket } from 'node:net';
import type { TestDatabase } from '@replix/testkit';
import { testMariaDb } from '@replix/testkit/vitest';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { startTestInstance, type TestInstance } from '../../instance/test/instance-helpers.ts';
import {
  type LiveQuery,
  type LiveQueryStatus,
  ReplixClient,
  type ReplixError,
  ReplixUnavailableError,
} from '../src/index.ts';

const BIG_ROWS = 20_000;
/** An answer of about 17 MB: far more than the socket buffers between a client and the instance. */
const BIG_QUERY = `big { id v } LIMIT ${BIG_ROWS}`;
/** More than the queries that fit in the working memory at 1 GiB each. */
const STALLED_READERS = 8;
const OVERLOAD_MS = 2000;
const UPDATES = 40;
const UPDATE_EVERY_MS = 100;

/**
 * Collects the process's unhandled rejections instead of failing the run with them, until the
 * returned function is called. Known instance bug (packages/instance/src/live-queries.ts, not
 * this suite's to fix): when a live query's first evaluation is refused as busy while the
 * swap loop (`#pass`) waits for it, `#pass` rejects and nothing handles it; in `replix serve`
 * that ends the process. The test accepts only that rejection, and fails on any other.
 */
function collectUnhandledRejections(): () => unknown[] {
  const collected: unknown[] = [];
  const previous = process.listeners('unhandledRejection');
  process.removeAllListeners('unhandledRejection');
  const collect = (reason: unknown) => collected.push(reason);
  process.on('unhandledRejection', collect);
  return () => {
    process.off('unhandledRejection', collect);
    for (const listener of previous) process.on('unhandledRejection', listener);
    return collected;
  };
}

const sleep = (ms: number) => new Promise((resolve) => setTimeout(resolve, ms));

/** A client that asks for the big answer and never reads it: its query keeps its turn. */
async function stalledReader(url: URL, key: string): Promise<Socket> {
  const socket = connect(Number(url.port), url.hostname);
  socket.on('error', () => {});
  await once(socket, 'connect');
  socket.pause();
  socket.write(
    `POST /query HTTP/1.1\r\nHost: ${url.host}\r\nAuthorization: Bearer ${key}\r\n` +
      `Content-Type: text/plain\r\nContent-Length: ${Buffer.byteLength(BIG_QUERY)}\r\n\r\n${BIG_QUERY}`,
  );
  return socket;
}

describe('ReplixClient.subscribe through an overload of its instance', () => {
  let db: TestDatabase;
  let served: TestInstance;

  beforeAll(async () => {
    db = await testMariaDb().createDatabase(`
      CREATE TABLE items (id INT PRIMARY KEY, n INT NOT NULL);
      INSERT INTO items VALUES (1, 0);
      CREATE TABLE big (id INT PRIMARY KEY, v VARCHAR(1000) NOT NULL);
      INSERT INTO big SELECT seq, CONCAT(REPEAT('v', 850), seq) FROM seq_1_to_${BIG_ROWS};
    `);
    served = await startTestInstance(db.url, {
      tables: [{ name: 'items' }, { name: 'big' }],
      sync: { mode: 'cdc', interval: 0.05 },
      query: { timeout_ms: 1000, max_response_bytes: 1024 * 1024 * 1024 },
    });
  }, 120_000);
  afterAll(async () => {
    await served?.close();
    await db?.drop();
  });

  it('survives, reconnecting, and ends with the final state: every result once, in order', async () => {
    const unhandled = collectUnhandledRejections();
    let live: LiveQuery | undefined;
    try {
      const replix = new ReplixClient({ url: served.url, key: served.key });
      const values: number[] = [];
      const errors: ReplixError[] = [];
      const statuses: LiveQueryStatus[] = [];
      live = replix.subscribe<{ n: number }>(
        'items (id = 1) { n }',
        (result) => values.push(result.data[0]?.n ?? -1),
        { onError: (error) => errors.push(error), onStatus: (status) => statuses.push(status) },
      );
      await expect.poll(() => values).toEqual([0]);

      // The source changes before, during and after the overload.
      const writes = (async () => {
        for (let n = 1; n <= UPDATES; n++) {
          await db.exec(`UPDATE items SET n = ${n} WHERE id = 1`);
          await sleep(UPDATE_EVERY_MS);
        }
      })();
      await sleep(500);
      const url = new URL(served.url);
      const stalled = await Promise.all(
        Array.from({ length: STALLED_READERS }, () => stalledReader(url, served.key)),
      );
      // Genuinely overloaded: a cheap lookup waits out its budget and is refused.
      await sleep(200);
      const cheap = await served.query('items (id = 1) { n }');
      expect(cheap.status, await cheap.text()).toBe(429);
      await sleep(OVERLOAD_MS - 200);
      for (const socket of stalled) socket.destroy();
      await writes;

      // The final state arrives, on the same subscription, and nothing ended it.
      const seen = () => JSON.stringify({ values, statuses, errors: errors.map(String) });
      await expect.poll(() => values.at(-1), { timeout: 20_000, message: seen() }).toBe(UPDATES);
      expect(errors, seen()).toEqual([]);
      // Every result at most once and never an older one after a newer one.
      for (let i = 1; i < values.length; i++)
        expect(values[i], seen()).toBeGreaterThan(values[i - 1]!);
      // The subscription was refused or asked to come back, and reconnected.
      const busy = statuses.filter(
        (status) =>
          status.state === 'reconnecting' && status.error instanceof ReplixUnavailableError,
      );
      expect(busy.length, JSON.stringify(statuses)).toBeGreaterThan(0);
      expect(statuses.at(-1)?.state).toBe('connected');
    } finally {
      live?.close();
      await live?.ended;
      await sleep(100);
      for (const reason of unhandled()) {
        expect(reason).toMatchObject({ code: 'too_many_requests' });
        expect(String((reason as Error).stack)).toContain('LiveQueries.#answer');
      }
    }
  }, 90_000);
});
