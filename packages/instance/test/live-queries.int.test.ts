import { deriveApiKey, newKeyId } from '@replix/instance-protocol';
import { EventStreamReader, type TestDatabase } from '@replix/testkit';
import { testMariaDb } from '@replix/testkit/vitest';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { LIVE_QUERY_LIMITS } from '../src/threads/live-queries.ts';
import { startTestInstance, type TestInstance } from './instance-helpers.ts';

const admin = testMariaDb();

const QUERY = 'items (grp = 1) { id name } ORDER BY id';

describe('live queries: GET /query with Accept: text/event-stream', () => {
  let db: TestDatabase;
  let served: TestInstance;
  const open: EventStreamReader[] = [];

  beforeAll(async () => {
    db = await admin.createDatabase(`
      CREATE TABLE items (id INT PRIMARY KEY, grp INT NOT NULL, name VARCHAR(20));
      CREATE TABLE other (id INT PRIMARY KEY);
      INSERT INTO items VALUES (1, 1, 'a'), (2, 2, 'b');
    `);
    served = await startTestInstance(
      db.url,
      { tables: [{ name: 'items' }, { name: 'other' }], sync: { mode: 'cdc', interval: 0.05 } },
      { replicationId: db.name },
    );
  });

  afterAll(async () => {
    for (const reader of open) await reader.close();
    await served?.close();
    await db?.drop();
  });

  async function subscribe(
    query = QUERY,
    headers: Record<string, string> = {},
  ): Promise<{ response: Response; events: EventStreamReader }> {
    const response = await fetch(`${served.url}/query?q=${encodeURIComponent(query)}`, {
      headers: { Authorization: `Bearer ${served.key}`, Accept: 'text/event-stream', ...headers },
    });
    if (response.status !== 200) throw new Error(`${response.status}: ${await response.text()}`);
    const events = new EventStreamReader(response);
    open.push(events);
    return { response, events };
  }

  const names = (data: string) => JSON.parse(data).data.map((row: { name: string }) => row.name);

  it('sends the current result first, in the usual envelope, with the generation as its id', async () => {
    const { response, events } = await subscribe();
    expect(response.status).toBe(200);
    expect(response.headers.get('content-type')).toBe('text/event-stream; charset=utf-8');
    expect(response.headers.get('cache-control')).toBe('no-cache');
    const first = await events.next();
    expect(first?.event).toBe('message');
    expect(first?.id).toMatch(/^\d+\.\S+$/);
    const body = JSON.parse(first?.data ?? '');
    expect(body.data).toEqual([{ id: 1, name: 'a' }]);
    expect(body.meta.table).toBe('items');
    await events.close();
  });

  it('sends an event when the result changes, and none for changes it does not read', async () => {
    const { events } = await subscribe();
    expect(names((await events.next())?.data ?? '')).toEqual(['a']);
    // Another table, then a row of items the query filters out: neither changes the result.
    await db.exec('INSERT INTO other VALUES (1)');
    await db.exec("UPDATE items SET name = 'b2' WHERE id = 2");
    expect(await events.next(600)).toBeNull();
    await db.exec("INSERT INTO items VALUES (3, 1, 'c')");
    const changed = await events.next();
    expect(names(changed?.data ?? '')).toEqual(['a', 'c']);
    await db.exec("UPDATE items SET name = 'c2' WHERE id = 3");
    expect(names((await events.next())?.data ?? '')).toEqual(['a', 'c2']);
    expect(await events.next(300)).toBeNull();
    await events.close();
  });

  it('evaluates identical queries once and tells each subscriber', async () => {
    const a = await subscribe();
    const b = await subscribe();
    const firstA = await a.events.next();
    const firstB = await b.events.next();
    expect(firstA?.data).toBe(firstB?.data);
    await db.exec("INSERT INTO items VALUES (4, 1, 'd')");
    const [nextA, nextB] = [await a.events.next(), await b.events.next()];
    expect(nextA?.id).toBe(nextB?.id);
    expect(names(nextA?.data ?? '')).toContain('d');
    await a.events.close();
    await b.events.close();
  });

  it('resumes with Last-Event-ID without a resend when the result is unchanged', async () => {
    const first = await subscribe();
    const event = await first.events.next();
    await first.events.close();
    // Unrelated changes move the generation on, not the result.
    await db.exec('INSERT INTO other VALUES (2)');
    await new Promise((resolve) => setTimeout(resolve, 300));
    const resumed = await subscribe(QUERY, { 'Last-Event-ID': event?.id ?? '' });
    expect(await resumed.events.next(500)).toBeNull();
    await db.exec("INSERT INTO items VALUES (5, 1, 'e')");
    expect(names((await resumed.events.next())?.data ?? '')).toContain('e');
    await resumed.events.close();
    // An id from before that change, or from another boot, gets the current result again.
    for (const id of [event?.id ?? '', '1.another-boot', 'nonsense']) {
      const again = await subscribe(QUERY, { 'Last-Event-ID': id });
      expect(names((await again.events.next())?.data ?? '')).toContain('e');
      await again.events.close();
    }
  });

  it('refuses a bad query, a missing key and a refused key before any stream starts', async () => {
    const bad = await fetch(`${served.url}/query?q=${encodeURIComponent('items {')}`, {
      headers: { Authorization: `Bearer ${served.key}`, Accept: 'text/event-stream' },
    });
    expect(bad.status).toBe(400);
    expect(((await bad.json()) as { error: { code: string } }).error.code).toBe('parse_error');
    const anonymous = await fetch(`${served.url}/query?q=${encodeURIComponent(QUERY)}`, {
      headers: { Accept: 'text/event-stream' },
    });
    expect(anonymous.status).toBe(401);
    expect(((await anonymous.json()) as { error: { code: string } }).error.code).toBe(
      'unauthorized',
    );
  });

  it(`limits one key to ${LIVE_QUERY_LIMITS.perKey} open live queries, with 429 and Retry-After`, async () => {
    const keyId = newKeyId();
    const key = deriveApiKey(served.keySecret, keyId);
    served.instance.keys.setAllowed({
      keyIds: [...allowedIds(served), keyId],
      adminKeyIds: [],
    });
    const headers = { Authorization: `Bearer ${key}` };
    const streams: EventStreamReader[] = [];
    for (let i = 0; i < LIVE_QUERY_LIMITS.perKey; i++) {
      const { response, events } = await subscribe(QUERY, headers);
      expect(response.status).toBe(200);
      expect(await events.next()).not.toBeNull();
      streams.push(events);
    }
    const refused = await fetch(`${served.url}/query?q=${encodeURIComponent(QUERY)}`, {
      headers: { ...headers, Accept: 'text/event-stream' },
    });
    expect(refused.status).toBe(429);
    expect(refused.headers.get('retry-after')).toBe('1');
    expect(((await refused.json()) as { error: { code: string } }).error.code).toBe(
      'too_many_requests',
    );
    // Another key is not held back by this one.
    const other = await subscribe();
    expect(await other.events.next()).not.toBeNull();
    await other.events.close();
    // A closed stream gives its place back.
    await streams.pop()?.close();
    await expect
      .poll(async () => {
        const again = await subscribe(QUERY, headers);
        await again.events.close();
        return again.response.status;
      })
      .toBe(200);
    // Revoking the key ends its streams at their next event, saying why.
    served.instance.keys.setAllowed({ keyIds: allowedIds(served), adminKeyIds: [] });
    await db.exec("INSERT INTO items VALUES (6, 1, 'f')");
    const last = streams[0] as EventStreamReader;
    const ended = await last.next();
    expect(ended?.event).toBe('query-error');
    expect(JSON.parse(ended?.data ?? '').error.code).toBe('unauthorized');
    expect(await last.next()).toBeNull();
    expect(last.ended).toBe(true);
    for (const stream of streams) await stream.close();
  });

  it('works the same with several query threads, each evaluating its own subscriptions', async () => {
    const threaded = await startTestInstance(
      db.url,
      { tables: [{ name: 'items' }, { name: 'other' }], sync: { mode: 'cdc', interval: 0.05 } },
      { replicationId: `${db.name}_threads`, threads: 2 },
    );
    const streams: EventStreamReader[] = [];
    try {
      // Several connections, so that both threads (reusePort) serve some of them.
      for (let i = 0; i < 6; i++) {
        const response = await fetch(`${threaded.url}/query?q=${encodeURIComponent(QUERY)}`, {
          headers: { Authorization: `Bearer ${threaded.key}`, Accept: 'text/event-stream' },
        });
        const events = new EventStreamReader(response);
        streams.push(events);
        expect(await events.next()).not.toBeNull();
      }
      await db.exec('INSERT INTO other VALUES (100)');
      await db.exec("INSERT INTO items VALUES (100, 1, 'threaded')");
      for (const events of streams) {
        const next = await events.next();
        expect(names(next?.data ?? '')).toContain('threaded');
      }
    } finally {
      for (const events of streams) await events.close();
      await threaded.close();
    }
  });

  it('ends open streams with query-retry when the instance closes, so clients reconnect elsewhere', async () => {
    const other = await startTestInstance(db.url, { tables: [{ name: 'items' }] });
    const response = await fetch(`${other.url}/query?q=${encodeURIComponent(QUERY)}`, {
      headers: { Authorization: `Bearer ${other.key}`, Accept: 'text/event-stream' },
    });
    const events = new EventStreamReader(response);
    expect(await events.next()).not.toBeNull();
    const closing = other.close();
    const retry = await events.next();
    expect(retry?.event).toBe('query-retry');
    expect(JSON.parse(retry?.data ?? '')).toEqual({
      error: { code: 'service_unavailable', message: 'This instance is closing; reconnect.' },
    });
    expect(await events.next()).toBeNull();
    expect(events.ended).toBe(true);
    await closing;
  });
});

/** The query key ids an instance started by `startTestInstance` allows. */
function allowedIds(served: TestInstance): string[] {
  return [served.key.slice('rxk_'.length).split('.')[0] as string];
}
