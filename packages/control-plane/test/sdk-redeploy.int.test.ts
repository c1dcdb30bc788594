/**
 * Issue 26: an SDK subscription survives a redeploy without losing an update. The app follows
 * a live query through the database's stable endpoint (the process driver's real
 * `EndpointRouter`) while a deploy does what `reconciler/deploy.ts` does: start the new
 * instance over the same source, switch the endpoint to it, stop the old one gracefully (which
 * ends its live streams). Rows are inserted all along, and once more with the source quiet.
 */
import { parseSchemaConfig } from '@replix/engine';
import { type RunningInstance, startInstance } from '@replix/instance';
import { deriveApiKey, newKeyId, newKeySecret } from '@replix/instance-protocol';
import type { TestDatabase } from '@replix/testkit';
import { testMariaDb } from '@replix/testkit/vitest';
import pino from 'pino';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import {
  type LiveQuery,
  type LiveQueryStatus,
  ReplixClient,
  type ReplixError,
} from '../../sdk/src/index.ts';
import { EndpointRouter } from '../src/adapters/drivers/process/endpoint-router.ts';

const DATABASE = 'db_redeploy';
const INSERTS = 60;
const INSERT_EVERY_MS = 80;

const sleep = (ms: number) => new Promise((resolve) => setTimeout(resolve, ms));

/** The deployed keys: every instance of the database gets the same secret and key ids. */
const keySecret = newKeySecret();
const keyId = newKeyId();
const key = deriveApiKey(keySecret, keyId);

/** Starts one instance of the database, as a deploy does (loaded when this resolves). */
function startDeployed(sourceUrl: string): Promise<RunningInstance> {
  return startInstance({
    sourceUrl,
    schemaConfig: parseSchemaConfig({
      tables: [{ name: 'items' }],
      sync: { mode: 'cdc', interval: 0.05 },
    }),
    host: '127.0.0.1',
    port: 0,
    keySecret,
    keyIds: [keyId],
    adminKeyIds: [],
    generatedKey: false,
    buildHash: 'testbuild000',
    logLevel: 'silent',
  });
}

describe('an SDK subscription through a redeploy behind the stable endpoint', () => {
  let db: TestDatabase;
  let router: EndpointRouter;
  let endpoint: string;
  const running = new Set<RunningInstance>();

  /** Starts the next instance, switches the endpoint to it, then stops the one before. */
  async function redeploy(name: string, previous: RunningInstance): Promise<RunningInstance> {
    const next = await startDeployed(db.url);
    running.add(next);
    router.route(DATABASE, name, [next.url]);
    await previous.close();
    running.delete(previous);
    return next;
  }

  beforeAll(async () => {
    db = await testMariaDb().createDatabase('CREATE TABLE items (id INT PRIMARY KEY)');
    router = new EndpointRouter({ log: pino({ level: 'silent' }) });
    endpoint = `http://127.0.0.1:${await router.open(DATABASE, null)}`;
  });
  afterAll(async () => {
    await router?.closeAll();
    for (const instance of running) await instance.close();
    await db?.drop();
  });

  it('gets every committed change and the final state, nothing twice, never going back', async () => {
    const first = await startDeployed(db.url);
    running.add(first);
    router.route(DATABASE, 'first', [first.url]);

    const replix = new ReplixClient({ url: endpoint, key });
    const results: number[][] = [];
    const counts = () => results.map((ids) => ids.length);
    const errors: ReplixError[] = [];
    const statuses: LiveQueryStatus[] = [];
    let live: LiveQuery | undefined;
    try {
      live = replix.subscribe<{ id: number }>(
        'items { id } ORDER BY id LIMIT 1000',
        (result) => results.push(result.data.map((row) => row.id)),
        { onError: (error) => errors.push(error), onStatus: (status) => statuses.push(status) },
      );
      await expect.poll(counts).toEqual([0]);

      // A deploy while rows are inserted.
      const inserts = (async () => {
        for (let id = 1; id <= INSERTS; id++) {
          await db.exec(`INSERT INTO items VALUES (${id})`);
          await sleep(INSERT_EVERY_MS);
        }
      })();
      await sleep(1000);
      const second = await redeploy('second', first);
      await inserts;
      await expect.poll(() => counts().at(-1), { timeout: 20_000 }).toBe(INSERTS);

      // A deploy with the source quiet: the new instance's first result is the one the app
      // has, so nothing is handed over; then a change arrives from the new instance.
      const handedOver = results.length;
      const reconnects = statuses.length;
      const third = await redeploy('third', second);
      await expect
        .poll(() => statuses.slice(reconnects).map((status) => status.state), { timeout: 20_000 })
        .toEqual(['reconnecting', 'connected']);
      await sleep(500);
      expect(results).toHaveLength(handedOver);
      await db.exec(`INSERT INTO items VALUES (${INSERTS + 1})`);
      await expect.poll(() => counts().at(-1), { timeout: 20_000 }).toBe(INSERTS + 1);
      expect(router.targetOf(DATABASE)).toBe('third');
      expect(running).toEqual(new Set([third]));

      expect(errors).toEqual([]);
      // Each result is the source at one moment: the rows inserted so far, none missing.
      for (const ids of results) expect(ids).toEqual(ids.map((_, index) => index + 1));
      // Never the same result twice, never an older one after a newer one.
      const sizes = counts();
      for (let i = 1; i < sizes.length; i++) expect(sizes[i]).toBeGreaterThan(sizes[i - 1]!);
      // Each deploy ended the stream (the old instance stopped) and the app reconnected.
      expect(statuses.filter((status) => status.state === 'connected')).toHaveLength(3);
    } finally {
      live?.close();
      await live?.ended;
    }
  }, 120_000);
});
