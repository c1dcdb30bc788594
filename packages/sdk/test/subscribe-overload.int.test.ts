/**
 * Issue 26: a brief overload must not end an SDK subscription. A real instance over MariaDB
 * refuses the subscription's key for about 2 s: a burst of the key's other traffic (an app's
 * other users) spends its rate limit, so every request of the key, a live query's reconnect
 * included, is refused with 429 and `Retry-After` until the burst ends. Meanwhile the source
 * keeps changing, and the subscription's connection is cut (a network blip), so the SDK's
 * reconnect meets the refusals: it must back off and come back. The old SDK ended the
 * subscription at the first refusal, so the app never saw the final state. The app must end
 * with the source's final state, on the same subscription, with every result once and in
 * order. (An overload of the instance's turns refuses the same way, 429 with `Retry-After`;
 * that the instance keeps a live query's stream open through refused re-evaluations is
 * `live-queries.test.ts`'s.)
 */
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
import { relay } from './tcp-relay.ts';

/** The key's rate limit: a burst of the key's other traffic spends it at once. */
const RATE_LIMIT = { quota: 20, windowSeconds: 1 };
const BURST_CLIENTS = 8;
const OVERLOAD_MS = 2000;
/** The overload ends by then even if no reconnect met it (the test then fails, saying so). */
const MAX_OVERLOAD_MS = 15_000;
const UPDATES = 40;
const UPDATE_EVERY_MS = 100;

const sleep = (ms: number) => new Promise((resolve) => setTimeout(resolve, ms));

/** `clients` loops sending a lookup with `key` until `stop` resolves; the answers' statuses. */
function burst(url: string, key: string, clients: number, stop: Promise<void>) {
  const statuses = new Map<number, number>();
  let stopped = false;
  void stop.then(() => {
    stopped = true;
  });
  const client = async () => {
    while (!stopped) {
      const response = await fetch(`${url}/query`, {
        method: 'POST',
        headers: { Authorization: `Bearer ${key}`, 'Content-Type': 'text/plain' },
        body: 'items (id = 1) { n }',
      }).catch(() => null);
      await response?.arrayBuffer();
      const status = response?.status ?? 0;
      statuses.set(status, (statuses.get(status) ?? 0) + 1);
    }
  };
  return { statuses, done: Promise.all(Array.from({ length: clients }, client)) };
}

describe('ReplixClient.subscribe through an overload of its instance', () => {
  let db: TestDatabase;
  let served: TestInstance;

  beforeAll(async () => {
    db = await testMariaDb().createDatabase(`
      CREATE TABLE items (id INT PRIMARY KEY, n INT NOT NULL);
      INSERT INTO items VALUES (1, 0);
    `);
    served = await startTestInstance(
      db.url,
      { tables: [{ name: 'items' }], sync: { mode: 'cdc', interval: 0.05 } },
      { rateLimit: RATE_LIMIT },
    );
  }, 120_000);
  afterAll(async () => {
    await served?.close();
    await db?.drop();
  });

  it('survives, reconnecting, and ends with the final state: every result once, in order', async () => {
    const network = await relay(new URL(served.url));
    let live: LiveQuery | undefined;
    let endOverload: () => void = () => {};
    try {
      const replix = new ReplixClient({ url: network.url, key: served.key });
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
      const overload = burst(
        served.url,
        served.key,
        BURST_CLIENTS,
        new Promise<void>((resolve) => {
          endOverload = resolve;
        }),
      );
      // The key is refused now.
      await expect.poll(async () => (await served.query('items (id = 1) { n }')).status).toBe(429);

      // Network blips, until a reconnect has met the refusals: the overload lasts at least
      // OVERLOAD_MS, and no more than needed for that.
      const busy = () =>
        statuses.filter(
          (status) =>
            status.state === 'reconnecting' && status.error instanceof ReplixUnavailableError,
        );
      const overloadStarted = Date.now();
      network.cut();
      const cuts = statuses.length;
      while (Date.now() - overloadStarted < OVERLOAD_MS || busy().length === 0) {
        if (Date.now() - overloadStarted > MAX_OVERLOAD_MS) break;
        // Cut again only a subscription that connected again without meeting a refusal: a
        // reconnect cut before its answer (on a slow machine) would never see the 429.
        const connectedAgain = statuses.length > cuts && statuses.at(-1)?.state === 'connected';
        if (connectedAgain && busy().length === 0) network.cut();
        await sleep(100);
      }
      endOverload();
      await overload.done;
      await writes;

      // The final state arrives, on the same subscription, and nothing ended it.
      const seen = () =>
        JSON.stringify({
          values,
          statuses,
          errors: errors.map(String),
          burst: [...overload.statuses],
        });
      await expect.poll(() => values.at(-1), { timeout: 30_000, message: seen() }).toBe(UPDATES);
      expect(errors, seen()).toEqual([]);
      // Every result at most once and never an older one after a newer one.
      for (let i = 1; i < values.length; i++)
        expect(values[i], seen()).toBeGreaterThan(values[i - 1] as number);
      // A reconnect was refused as busy (429), and the subscription came back all the same.
      expect(busy().length, seen()).toBeGreaterThan(0);
      expect(statuses.at(-1)?.state).toBe('connected');
    } finally {
      endOverload();
      live?.close();
      await live?.ended;
      network.close();
    }
  }, 90_000);
});
