import type { TestDatabase } from '@replix/testkit';
import { testMariaDb } from '@replix/testkit/vitest';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { startTestInstance, type TestInstance } from '../../instance/test/instance-helpers.ts';
import {
  type QueryResult,
  ReplixAuthError,
  ReplixClient,
  type ReplixError,
  ReplixParseError,
  rql,
} from '../src/index.ts';
import { relay } from './tcp-relay.ts';

type Item = { id: number; name: string };

/** Collects a subscription's results and its ending error. */
function collector() {
  const results: QueryResult<Item>[] = [];
  const errors: ReplixError[] = [];
  return {
    results,
    errors,
    names: () => results.map((result) => result.data.map((row) => row.name).join(',')),
    onResult: (result: QueryResult<Item>) => results.push(result),
    onError: (error: ReplixError) => errors.push(error),
  };
}

describe('ReplixClient.subscribe: live queries', () => {
  let db: TestDatabase;
  let served: TestInstance;

  beforeAll(async () => {
    db = await testMariaDb().createDatabase(`
      CREATE TABLE items (id INT PRIMARY KEY, grp INT NOT NULL, name VARCHAR(20));
      INSERT INTO items VALUES (1, 1, 'a'), (2, 2, 'b');
    `);
    served = await startTestInstance(
      db.url,
      { tables: [{ name: 'items' }], sync: { mode: 'cdc', interval: 0.05 } },
      { replicationId: db.name },
    );
  });
  afterAll(async () => {
    await served?.close();
    await db?.drop();
  });

  it('hands over the current result, then each change, until closed', async () => {
    const replix = new ReplixClient({ url: served.url, key: served.key });
    const seen = collector();
    const live = replix.subscribe<Item>(
      rql`items (grp = ${1}) { id name } ORDER BY id`,
      seen.onResult,
      { onError: seen.onError },
    );
    await expect.poll(seen.names).toEqual(['a']);
    expect(seen.results[0]?.data).toEqual([{ id: 1, name: 'a' }]);
    await db.exec("INSERT INTO items VALUES (3, 1, 'c')");
    await expect.poll(seen.names).toEqual(['a', 'a,c']);
    live.close();
    await live.ended;
    await db.exec("INSERT INTO items VALUES (4, 1, 'd')");
    await new Promise((resolve) => setTimeout(resolve, 300));
    expect(seen.names()).toEqual(['a', 'a,c']);
    expect(seen.errors).toEqual([]);
  });

  it('reconnects after a lost connection and resumes without a resend', async () => {
    const network = await relay(new URL(served.url));
    try {
      const replix = new ReplixClient({ url: network.url, key: served.key });
      const seen = collector();
      const live = replix.subscribe<Item>('items (grp = 2) { id name } ORDER BY id', seen.onResult);
      await expect.poll(seen.names).toEqual(['b']);
      network.cut();
      await expect.poll(network.connections).toBe(0);
      // It is back on a new connection (the instance asks for a reconnect after 1 s).
      await expect.poll(network.connections, { timeout: 5000 }).toBe(1);
      await new Promise((resolve) => setTimeout(resolve, 300));
      expect(seen.names()).toEqual(['b']);
      await db.exec("UPDATE items SET name = 'b2' WHERE id = 2");
      await expect.poll(seen.names).toEqual(['b', 'b2']);
      live.close();
      await live.ended;
    } finally {
      network.close();
    }
  });

  it('ends with the typed error for a bad query, and for a key revoked while it is open', async () => {
    const replix = new ReplixClient({ url: served.url, key: served.key });
    const bad = collector();
    const refused = replix.subscribe('items {', bad.onResult, { onError: bad.onError });
    await refused.ended;
    expect(bad.errors[0]).toBeInstanceOf(ReplixParseError);
    expect(bad.results).toEqual([]);

    const seen = collector();
    const live = replix.subscribe<Item>('items { id name } ORDER BY id', seen.onResult, {
      onError: seen.onError,
    });
    await expect.poll(() => seen.results.length).toBe(1);
    served.instance.keys.setAllowed({ keyIds: [], adminKeyIds: [] });
    try {
      await db.exec("INSERT INTO items VALUES (10, 3, 'z')");
      await live.ended;
      expect(seen.errors[0]).toBeInstanceOf(ReplixAuthError);
      expect(seen.errors[0]?.code).toBe('unauthorized');
      expect(seen.results).toHaveLength(1);
    } finally {
      served.instance.keys.setAllowed({
        keyIds: [served.key.slice('rxk_'.length).split('.')[0] as string],
        adminKeyIds: [],
      });
    }
  });

  it('stops when its signal aborts', async () => {
    const replix = new ReplixClient({ url: served.url, key: served.key });
    const abort = new AbortController();
    const seen = collector();
    const live = replix.subscribe('items { id }', seen.onResult, { signal: abort.signal });
    await expect.poll(() => seen.results.length).toBe(1);
    abort.abort();
    await live.ended;
  });
});
