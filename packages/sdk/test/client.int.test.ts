import { testMariaDb } from '@replix/testkit/vitest';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { startTestInstance, type TestInstance } from '../../instance/test/instance-helpers.ts';
import {
  escapeLike,
  ReplixAuthError,
  ReplixClient,
  ReplixConnectionError,
  ReplixError,
  ReplixParseError,
  ReplixQueryError,
  ReplixUnavailableError,
  ReplixUnknownTableError,
  rql,
} from '../src/index.ts';
import { generateTypes } from '../src/typegen.ts';
import { random, randomString } from './random-text.ts';
import { type RefusingProxy, startRefusingProxy } from './refusing-proxy.ts';
import { typeErrors } from './typecheck.ts';

const SETUP = `
CREATE TABLE customers (id INT PRIMARY KEY, name VARCHAR(200) COLLATE utf8mb4_bin, country CHAR(2),
  balance BIGINT UNSIGNED) DEFAULT CHARSET = utf8mb4;
CREATE TABLE orders (id INT PRIMARY KEY, customer_id INT NOT NULL, total DECIMAL(10,2),
  FOREIGN KEY (customer_id) REFERENCES customers (id));
CREATE TABLE ledger (id BIGINT PRIMARY KEY, amount DECIMAL(30,4), visits INT, ratio DOUBLE);
INSERT INTO ledger VALUES (9007199254740993, 1234567890123456.7891, 3, 0.5),
  (2, 12.5, 4, NULL), (3, NULL, 5, 0.1);
`;

/** Names with quotes, backslashes, comment markers, control characters and any script. */
const next = random(18);
const NAMES = Array.from({ length: 40 }, (_, i) => `${randomString(next)}#${i}`);

interface Customer {
  id: number;
  name: string;
  country: string | null;
}

describe('ReplixClient against a real instance', () => {
  let served: TestInstance;
  let proxy: RefusingProxy;
  let replix: ReplixClient;

  beforeAll(async () => {
    const db = await testMariaDb().createDatabase(SETUP);
    for (const [i, name] of NAMES.entries()) {
      await db.query('INSERT INTO customers VALUES (?, ?, ?, ?)', [
        i + 1,
        name,
        i % 2 ? 'IS' : 'GB',
        i === 0 ? '18446744073709551615' : i,
      ]);
    }
    await db.exec(`INSERT INTO orders VALUES (1, 1, 12.50), (2, 1, 3.00), (3, 2, 99.99)`);
    served = await startTestInstance(db.url);
    proxy = await startRefusingProxy(served.url);
    replix = new ReplixClient({ url: served.url, key: served.key });
  });
  afterAll(async () => {
    await proxy?.close();
    await served?.close();
  });

  it('answers typed rows, relations embedded', async () => {
    const { data, meta } = await replix.query<Customer & { orders: { total: string }[] }>(
      rql`customers (id = ${1}) { id name country orders { total } ORDER BY id }`,
    );
    expect(data).toEqual([
      { id: 1, name: NAMES[0], country: 'GB', orders: [{ total: '12.50' }, { total: '3.00' }] },
    ]);
    expect(meta.table).toBe('customers');
    expect(meta.pagination).toMatchObject({ count: 1, total_matched: 1 });
  });

  it('finds each hostile name by equality, IN and LIKE: exactly its own row', async () => {
    for (const [i, name] of NAMES.entries()) {
      const equal = await replix.query<Customer>(rql`customers (name = ${name}) { id name }`);
      expect(equal.data, JSON.stringify(name)).toEqual([{ id: i + 1, name }]);
      const list = await replix.query<Customer>(
        rql`customers (name IN ${[name, "nobody's"]} AND id >= ${0}) { id }`,
        { method: 'POST' },
      );
      expect(list.data).toEqual([{ id: i + 1 }]);
      const like = await replix.query<Customer>(
        rql`customers (name LIKE ${escapeLike(name)}) { id }`,
      );
      expect(like.data).toEqual([{ id: i + 1 }]);
    }
  });

  it('types every table, field and relation from /openapi.json, in TypeScript that compiles', async () => {
    const types = generateTypes(await replix.openapi());
    const use = `import type { Customers, Orders, Tables } from './types.ts';
const customer: Tables['customers'] = { id: 1, name: 'Ada', country: null, balance: 1n };
const order: Orders = { id: 1, customer_id: 1, total: '12.50', customer: { ...customer } };
const withOrders: Customers = { ...customer, orders: [order] };
export const names: (string | null)[] = [withOrders.name, String(order.customer?.id)];
`;
    expect(typeErrors({ 'types.ts': types, 'use.ts': use })).toEqual([]);
    const wrong = `import type { Tables } from './types.ts';
export const customer: Tables['customers'] = { id: '1', name: 'Ada', country: null, balance: 1n };
`;
    expect(typeErrors({ 'types.ts': types, 'wrong.ts': wrong })).toEqual([
      expect.stringMatching(/^wrong\.ts:2: Type 'string' is not assignable to type 'number'/),
    ]);
  });

  it('keeps every digit in the body it hands back', async () => {
    const result = await replix.query(rql`customers (id = ${1}) { balance }`);
    expect(result.body).toContain('18446744073709551615');
    expect(result.data).toEqual([{ balance: 18446744073709551615n }]);
  });

  it('gives BIGINT and DECIMAL exactly by default, per column, and plain numbers when asked', async () => {
    const query = 'ledger { id amount visits ratio } ORDER BY id';
    const exact = await replix.query(query);
    expect(exact.data).toEqual([
      { id: 2n, amount: '12.5000', visits: 4, ratio: null },
      { id: 3n, amount: null, visits: 5, ratio: 0.1 },
      { id: 9007199254740993n, amount: '1234567890123456.7891', visits: 3, ratio: 0.5 },
    ]);
    const plain = new ReplixClient({ url: served.url, key: served.key, numbers: 'plain' });
    expect((await plain.query(query)).data).toEqual([
      { id: 2, amount: 12.5, visits: 4, ratio: null },
      { id: 3, amount: null, visits: 5, ratio: 0.1 },
      { id: 9007199254740992, amount: 1234567890123456.8, visits: 3, ratio: 0.5 },
    ]);
    const sums = await replix.query(
      'ledger { SUM(id) SUM(amount) AVG(amount) AVG(visits) COUNT(*) }',
    );
    expect(sums.data).toEqual([
      {
        sum_id: 9007199254740998n,
        sum_amount: '1234567890123469.2891',
        avg_amount: '617283945061734.64455000',
        avg_visits: 4,
        count: 3,
      },
    ]);
    // Paging and live queries read rows the same way.
    const paged = [];
    for await (const row of replix.rows<{ id: bigint; amount: string | null }>(
      'ledger { id amount } LIMIT 2',
    )) {
      paged.push(row);
    }
    expect(paged).toEqual([
      { id: 2n, amount: '12.5000' },
      { id: 3n, amount: null },
      { id: 9007199254740993n, amount: '1234567890123456.7891' },
    ]);
    const live = await new Promise<unknown[]>((resolve, reject) => {
      const subscription = replix.subscribe(
        'ledger (id > 3) { id amount }',
        (result) => {
          subscription.close();
          resolve(result.data);
        },
        { onError: reject },
      );
    });
    expect(live).toEqual([{ id: 9007199254740993n, amount: '1234567890123456.7891' }]);
  });

  it('parseJson, when given, reads the rows instead', async () => {
    const client = new ReplixClient({
      url: served.url,
      key: served.key,
      parseJson: (text) => JSON.parse(text, (_key, value) => (value === 3 ? 'three' : value)),
    });
    const { data } = await client.query('ledger (id = 9007199254740993) { visits }');
    expect(data).toEqual([{ visits: 'three' }]);
  });

  it('walks a table with AFTER, every row once, in pages', async () => {
    const pages = [];
    for await (const page of replix.pages<Pick<Customer, 'id'>>(rql`customers { id } LIMIT 15`)) {
      pages.push(page.data.map((row) => row.id));
    }
    expect(pages.map((ids) => ids.length)).toEqual([15, 15, 10]);
    const ids: number[] = [];
    for await (const row of replix.rows<Pick<Customer, 'id'>>('customers { id } LIMIT 7 -- end')) {
      ids.push(row.id);
    }
    expect(ids).toEqual(NAMES.map((_, i) => i + 1));
  });

  it('asks again with If-None-Match and reuses the body on 304, until the snapshot changes', async () => {
    const client = new ReplixClient({ url: proxy.url, key: served.key });
    const query = rql`customers (country = ${'IS'}) { id } LIMIT 3`;
    const first = await client.query(query);
    const second = await client.query(query);
    expect(first.cached).toBe(false);
    expect(first.etag).toMatch(/^(W\/)?"/);
    expect(second).toMatchObject({ cached: true, etag: first.etag, data: first.data });
    expect(proxy.requests.slice(-2).map((r) => r.ifNoneMatch)).toEqual([undefined, first.etag]);

    const reload = await fetch(`${served.url}/reload?wait=true`, {
      method: 'POST',
      headers: { authorization: `Bearer ${served.adminKey}` },
    });
    expect(reload.status).toBe(200);
    const third = await client.query(query);
    expect(third.cached).toBe(false);
    expect(third.etag).not.toBe(first.etag);
    expect(third.data).toEqual(first.data);
  });

  it('sends a query too long for a URL by POST, and a short one by GET', async () => {
    const client = new ReplixClient({ url: proxy.url, key: served.key });
    const long = Array.from({ length: 300 }, (_, i) => `nobody number ${i} ${'x'.repeat(20)}`);
    const before = proxy.requests.length;
    const many = await client.query(rql`customers (name IN ${[...long, NAMES[2]!]}) { id }`);
    const one = await client.query(rql`customers (name IN ${[NAMES[2]!]}) { id }`);
    expect([many.data, one.data]).toEqual([[{ id: 3 }], [{ id: 3 }]]);
    expect(proxy.requests.slice(before).map((request) => request.method)).toEqual(['POST', 'GET']);
  });

  it('throws typed errors by the envelope code', async () => {
    const failure = async (promise: Promise<unknown>) => {
      try {
        await promise;
      } catch (error) {
        return error as ReplixError;
      }
      throw new Error('expected a failure');
    };
    const parse = await failure(replix.query('customers { id'));
    expect(parse).toBeInstanceOf(ReplixParseError);
    expect(parse).toMatchObject({ code: 'parse_error', status: 400 });
    expect(parse.message).toMatch(/line 1/);

    const field = await failure(replix.query('customers { nmae }'));
    expect(field).toBeInstanceOf(ReplixQueryError);
    expect(field).toMatchObject({ code: 'executor_error', status: 400 });
    expect(field.message).toMatch(/Did you mean "name"/);

    const table = await failure(replix.query('shoppers { id }'));
    expect(table).toBeInstanceOf(ReplixUnknownTableError);
    expect(table).toMatchObject({ code: 'unknown_table', status: 404 });

    const wrongKey = `${served.key.slice(0, -2)}xx`;
    const auth = await failure(
      new ReplixClient({ url: served.url, key: wrongKey }).query('customers { id }'),
    );
    expect(auth).toBeInstanceOf(ReplixAuthError);
    expect(auth).toMatchObject({ code: 'unauthorized', status: 401 });

    const closed = await startRefusingProxy(served.url);
    await closed.close();
    const unreachable = await failure(
      new ReplixClient({ url: closed.url, key: served.key }).query('customers { id }'),
    );
    expect(unreachable).toBeInstanceOf(ReplixConnectionError);
    expect(unreachable).toMatchObject({ code: 'connection_failed', status: 0 });
    expect(unreachable.message).toContain(closed.url);
    expect(unreachable.message).not.toContain(served.key);
    const notQuery = { text: 'customers { id }' } as unknown as string;
    await expect(replix.query(notQuery)).rejects.toThrow(/a query is a string or an rql/);
    for (const error of [parse, field, table, auth, unreachable]) {
      expect(error).toBeInstanceOf(ReplixError);
    }
  });

  it('retries 503 and 429 as Retry-After says, then answers', async () => {
    const client = new ReplixClient({ url: proxy.url, key: served.key });
    const before = proxy.requests.length;
    proxy.refuse(
      {
        status: 503,
        headers: { 'retry-after': '0' },
        body: JSON.stringify({ error: { code: 'service_unavailable', message: 'Paused.' } }),
      },
      { status: 503, body: JSON.stringify({ status: 'loading' }) },
      {
        status: 429,
        headers: { 'retry-after': '0' },
        body: JSON.stringify({ error: { code: 'too_many_requests', message: 'Busy.' } }),
      },
    );
    const { data } = await client.query<Customer>(rql`customers (id = ${2}) { id }`, {
      method: 'POST',
    });
    expect(data).toEqual([{ id: 2 }]);
    expect(proxy.requests.length - before).toBe(4);
  });

  it('stops retrying after its bound, or when Retry-After asks for longer than it waits', async () => {
    const client = new ReplixClient({
      url: proxy.url,
      key: served.key,
      retry: { retries: 1, baseDelayMs: 1, maxDelayMs: 2000 },
    });
    const loading = { status: 503, body: JSON.stringify({ status: 'loading' }) };
    let before = proxy.requests.length;
    proxy.refuse(loading, loading);
    const starting = await client.query('customers { id }').catch((error: unknown) => error);
    expect(starting).toBeInstanceOf(ReplixUnavailableError);
    expect(starting).toMatchObject({ code: 'starting', status: 503 });
    expect((starting as Error).message).toMatch(/not serving yet \(status loading\)/);
    expect(proxy.requests.length - before).toBe(2);

    before = proxy.requests.length;
    proxy.refuse({
      status: 503,
      headers: { 'retry-after': '3600' },
      body: JSON.stringify({
        error: { code: 'service_unavailable', message: 'Paused: resume it.' },
      }),
    });
    const paused = await client.query('customers { id }').catch((error: unknown) => error);
    expect(paused).toMatchObject({
      code: 'service_unavailable',
      status: 503,
      message: 'Paused: resume it.',
      retryAfterMs: 3_600_000,
    });
    expect(proxy.requests.length - before).toBe(1);
  });

  it('stops a request, or its wait for a retry, when its signal aborts', async () => {
    const aborted = replix.query('customers { id }', { signal: AbortSignal.abort() });
    await expect(aborted).rejects.toMatchObject({ name: 'AbortError' });
    const client = new ReplixClient({ url: proxy.url, key: served.key });
    proxy.refuse({
      status: 503,
      headers: { 'retry-after': '9' },
      body: JSON.stringify({ error: { code: 'service_unavailable', message: 'Paused.' } }),
    });
    const waiting = client.query('customers { id }', { signal: AbortSignal.timeout(200) });
    await expect(waiting).rejects.toMatchObject({ name: 'TimeoutError' });
  });
});
