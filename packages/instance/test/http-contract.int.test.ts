import { compileSchema, parseSchemaConfig } from '@replix/engine';
import { deriveApiKey, newKeyId, newKeySecret } from '@replix/instance-protocol';
import { connectorFromUrl } from '@replix/sources';
import { testMariaDb } from '@replix/testkit/vitest';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { ApiKeyVerifier, buildInstanceServer, SnapshotController } from '../src/index.ts';
import { createLogger } from '../src/start-instance.ts';
import { json, startTestInstance, type TestInstance } from './instance-helpers.ts';
import { countServerWrites, rawExchange } from './server-writes.ts';

const SETUP = `
CREATE TABLE customers (id INT PRIMARY KEY, name VARCHAR(40), country CHAR(2));
CREATE TABLE orders (id BIGINT PRIMARY KEY, customer_id INT, total DECIMAL(10,2),
  FOREIGN KEY (customer_id) REFERENCES customers(id));
CREATE TABLE pairs (a INT, b INT, label TEXT, PRIMARY KEY (a, b));
INSERT INTO customers VALUES (1, 'Ada', 'GB'), (2, 'Björk', 'IS'), (3, 'Grace', 'US');
INSERT INTO orders VALUES (10, 1, 12.50), (11, 1, 7.25), (12, 2, 100.00);
INSERT INTO pairs VALUES (1, 1, 'x'), (1, 2, 'y');
`;

describe('instance HTTP contract', () => {
  let served: TestInstance;

  beforeAll(async () => {
    const db = await testMariaDb().createDatabase(SETUP);
    served = await startTestInstance(db.url, { query: { max_body_bytes: 1024 } });
  });
  afterAll(() => served?.close());

  const errorOf = async (response: Response) => ({
    status: response.status,
    body: await json(response),
  });

  it('answers a POST query with the success envelope and X-Service-Version = meta.version', async () => {
    const response = await served.query(
      "customers (country != 'US') { id name orders { total } } ORDER BY name DESC LIMIT 5",
    );
    expect(response.status).toBe(200);
    const body = await json(response);
    expect(body.data).toEqual([
      { id: 2, name: 'Björk', orders: [{ total: 100 }] },
      { id: 1, name: 'Ada', orders: [{ total: 12.5 }, { total: 7.25 }] },
    ]);
    expect(body.meta).toMatchObject({
      table: 'customers',
      query: {
        fields: ['id', 'name', 'orders'],
        filter: "country != 'US'",
        order_by: [{ field: 'name', direction: 'DESC' }],
        limit: 5,
      },
      pagination: { count: 2, total_matched: 2, has_more: false, limit: 5 },
      snapshot: { swap_count: 0 },
    });
    expect(typeof body.meta.timing_ms).toBe('number');
    expect(body.meta.version).toMatch(/^\d+\.\d+\.\d+-testbuild000$/);
    expect(response.headers.get('x-service-version')).toBe(body.meta.version);
  });

  it('takes the POST body as plain text whatever the Content-Type', async () => {
    for (const type of ['application/json', 'text/plain', 'application/x-www-form-urlencoded']) {
      const response = await served.query('customers { id } LIMIT 1', {
        headers: { 'Content-Type': type },
      });
      expect(response.status).toBe(200);
    }
  });

  it('rejects missing, malformed and unknown API keys with 401 unauthorized', async () => {
    const keyId = served.key.slice(4, 20);
    for (const authorization of [
      undefined,
      'Bearer nope',
      `Bearer rxk_${keyId}.${'A'.repeat(43)}`,
      `Bearer rxk_0000000000000000.${served.key.slice(21)}`,
    ]) {
      const headers: Record<string, string> = authorization ? { Authorization: authorization } : {};
      const response = await fetch(`${served.url}/query`, {
        method: 'POST',
        body: 'customers { id }',
        headers,
      });
      expect(await errorOf(response)).toEqual({
        status: 401,
        body: { error: { code: 'unauthorized', message: expect.stringContaining('API key') } },
      });
    }
  });

  it('lets browsers of any origin query with a key, refusals included (CORS)', async () => {
    const preflight = await fetch(`${served.url}/query`, {
      method: 'OPTIONS',
      headers: {
        Origin: 'http://dashboard.example',
        'Access-Control-Request-Method': 'POST',
        'Access-Control-Request-Headers': 'authorization, content-type',
      },
    });
    expect(preflight.status).toBe(204);
    expect(preflight.headers.get('access-control-allow-origin')).toBe('*');
    expect(preflight.headers.get('access-control-allow-headers')).toContain('authorization');
    const answered = await served.query('customers { id } LIMIT 1', {
      headers: { Origin: 'http://dashboard.example' },
    });
    expect(answered.headers.get('access-control-allow-origin')).toBe('*');
    expect(answered.headers.get('access-control-expose-headers')).toContain('etag');
    // The engine's time, readable by the page, and the same figure as meta.timing_ms.
    expect(answered.headers.get('access-control-expose-headers')).toContain('server-timing');
    expect(answered.headers.get('timing-allow-origin')).toBe('*');
    const { meta } = (await answered.json()) as { meta: { timing_ms: number } };
    expect(answered.headers.get('server-timing')).toBe(`engine;dur=${meta.timing_ms}`);
    const refused = await fetch(`${served.url}/query`, {
      method: 'POST',
      body: 'customers { id }',
      headers: { Origin: 'http://dashboard.example' },
    });
    expect(refused.status).toBe(401);
    expect(refused.headers.get('access-control-allow-origin')).toBe('*');
    // Every answer carries the version and the CORS fields: preflights and unknown paths too.
    const version = answered.headers.get('x-service-version');
    expect(version).toBeTruthy();
    expect(preflight.headers.get('x-service-version')).toBe(version);
    const unknown = await fetch(`${served.url}/nowhere`, {
      headers: { Origin: 'http://dashboard.example' },
    });
    expect(unknown.status).toBe(404);
    expect(unknown.headers.get('x-service-version')).toBe(version);
    expect(unknown.headers.get('access-control-allow-origin')).toBe('*');
    expect(unknown.headers.get('access-control-expose-headers')).toBe(
      answered.headers.get('access-control-expose-headers'),
    );
    // A preflight without its fields is no CORS request: refused as before.
    const bare = await fetch(`${served.url}/query`, { method: 'OPTIONS' });
    expect(bare.status).toBe(400);
    // A request without an Origin (a server's, not a page's) gets no CORS fields; every answer
    // says it varies by Origin, so no cache hands one kind to the other.
    const text = 'customers { id } LIMIT 1';
    const fromServers = [
      await served.query(text),
      await fetch(`${served.url}/query`, { method: 'POST', body: text }),
      await fetch(`${served.url}/nowhere`),
    ];
    expect(fromServers.map((response) => response.status)).toEqual([200, 401, 404]);
    for (const response of fromServers) {
      expect(response.headers.get('vary')).toBe('Origin');
      expect(response.headers.get('x-service-version')).toBe(version);
      for (const field of [
        'access-control-allow-origin',
        'access-control-expose-headers',
        'timing-allow-origin',
      ])
        expect(response.headers.get(field), field).toBeNull();
    }
    for (const response of [answered, refused, unknown])
      expect(response.headers.get('vary')).toBe('Origin');
  });

  it('answers 400 parse_error with the position', async () => {
    const { status, body } = await errorOf(await served.query('customers { id'));
    expect(status).toBe(400);
    expect(body.error.code).toBe('parse_error');
    expect(body.error.message).toContain('line 1, column');
  });

  it('answers 400 executor_error for unknown fields, in the selection unless @lenient', async () => {
    const unknown = await errorOf(await served.query('customers { id nmae }'));
    expect(unknown).toEqual({
      status: 400,
      body: {
        error: {
          code: 'executor_error',
          message: 'Unknown field "nmae" on table "customers". Did you mean "name"?',
        },
      },
    });
    const lenient = await served.json('@lenient customers { id nmae } LIMIT 1');
    expect(lenient.data).toEqual([{ id: 1 }]);
    for (const text of [
      "@lenient customers (nmae = 'x') { id }",
      '@lenient customers { id } ORDER BY nmae',
    ]) {
      expect((await errorOf(await served.query(text))).body.error.code).toBe('executor_error');
    }
  });

  it('answers 400 for AFTER on a composite key, with aggregates, and for a malformed cursor', async () => {
    for (const text of [
      "pairs { a } AFTER ''",
      "orders { COUNT(*) } AFTER ''",
      "orders { id } AFTER 'not-a-cursor!'",
    ]) {
      const { status, body } = await errorOf(await served.query(text));
      expect(status).toBe(400);
      expect(body.error.code).toBe('executor_error');
    }
  });

  it('answers 404 unknown_table', async () => {
    expect(await errorOf(await served.query('custmers { id }'))).toEqual({
      status: 404,
      body: {
        error: {
          code: 'unknown_table',
          message: 'Unknown table "custmers". Did you mean "customers"?',
        },
      },
    });
  });

  it('answers 413 payload_too_large over query.max_body_bytes, for POST and GET', async () => {
    const big = `customers { id } ${'-- padding\n'.repeat(200)}`;
    expect((await errorOf(await served.query(big))).status).toBe(413);
    const get = await errorOf(await served.query(big, { method: 'GET' }));
    expect(get).toEqual({
      status: 413,
      body: { error: { code: 'payload_too_large', message: expect.any(String) } },
    });
    // The limit is in bytes: 600 characters of two bytes each are over 1,024 of them.
    const wide = `customers (name = '${'é'.repeat(600)}') { id }`;
    expect(wide.length).toBeLessThan(1024);
    expect((await errorOf(await served.query(wide, { method: 'GET' }))).status).toBe(413);
    expect((await errorOf(await served.query(wide))).status).toBe(413);
  });

  it('serves GET /query with an ETag and 304 for If-None-Match: one tag, a list, weak tags, *', async () => {
    const text = 'orders { id total } ORDER BY id';
    const first = await served.query(text, { method: 'GET' });
    expect(first.status).toBe(200);
    const etag = first.headers.get('etag') as string;
    expect(etag).toMatch(/^".+"$/);
    for (const header of [etag, `"other", ${etag}`, `W/${etag}`, '*']) {
      const again = await served.query(text, {
        method: 'GET',
        headers: { 'If-None-Match': header },
      });
      expect(again.status).toBe(304);
      expect(await again.text()).toBe('');
    }
    const other = await served.query(text, {
      method: 'GET',
      headers: { 'If-None-Match': '"nope"' },
    });
    expect(other.status).toBe(200);
    expect(other.headers.get('etag')).toBe(etag);
  });

  it('changes the ETag when the snapshot refreshes, and counts the swap', async () => {
    const text = 'customers { id }';
    const before = (await served.query(text, { method: 'GET' })).headers.get('etag') as string;
    const reload = await fetch(`${served.url}/reload?wait=true`, {
      method: 'POST',
      headers: { Authorization: `Bearer ${served.adminKey}` },
    });
    expect(await json(reload)).toEqual({ reloaded: true, swap_count: 1 });
    const after = await served.query(text, { method: 'GET', headers: { 'If-None-Match': before } });
    expect(after.status).toBe(200);
    expect(after.headers.get('etag')).not.toBe(before);
    expect((await json(after)).meta.snapshot.swap_count).toBe(1);
  });

  it('answers 404 not_found for an unknown endpoint, with the envelope', async () => {
    expect(await errorOf(await fetch(`${served.url}/nope`))).toEqual({
      status: 404,
      body: { error: { code: 'not_found', message: 'No endpoint GET /nope.' } },
    });
  });

  it('sends a small answer, its head and body, in one write: answers, 304s and refusals', async () => {
    const path = `/query?q=${encodeURIComponent('customers { id name } LIMIT 2')}`;
    const request = (headers: string) =>
      `GET ${path} HTTP/1.1\r\nHost: replix\r\nOrigin: http://dashboard.example\r\n${headers}\r\n`;
    const writes = countServerWrites();
    try {
      const exchange = async (headers: string) => {
        const before = writes.count;
        const response = await rawExchange(served.url, request(headers));
        return { ...response, writes: writes.count - before };
      };
      const answered = await exchange(`Authorization: Bearer ${served.key}\r\n`);
      expect(answered.head).toMatch(/^HTTP\/1\.1 200 /);
      expect(answered.head).toMatch(/\r\netag: "/i);
      expect(answered.head).toMatch(/\r\naccess-control-allow-origin: \*/i);
      expect(answered.head).toMatch(/\r\nserver-timing: engine;dur=/i);
      expect(JSON.parse(answered.body).data).toEqual([
        { id: 1, name: 'Ada' },
        { id: 2, name: 'Björk' },
      ]);
      expect(answered.writes).toBe(1);
      const etag = /\r\netag: ("[^"]+")/i.exec(answered.head)?.[1];
      const notModified = await exchange(
        `Authorization: Bearer ${served.key}\r\nIf-None-Match: ${etag}\r\n`,
      );
      expect(notModified.head).toMatch(/^HTTP\/1\.1 304 /);
      expect(notModified.writes).toBe(1);
      const refused = await exchange('');
      expect(refused.head).toMatch(/^HTTP\/1\.1 401 /);
      expect(refused.head).toMatch(/\r\nx-service-version: /i);
      expect(JSON.parse(refused.body).error.code).toBe('unauthorized');
      expect(refused.writes).toBe(1);
    } finally {
      writes.stop();
    }
  });

  it('answers GET /query (taken off node:http) as POST (through Fastify): fields, errors, paths', async () => {
    const auth = { Authorization: `Bearer ${served.key}`, Origin: 'http://dashboard.example' };
    const text = 'customers (id = 2) { id name }';
    const get = await fetch(`${served.url}/query?q=${encodeURIComponent(text)}`, { headers: auth });
    const post = await fetch(`${served.url}/query`, { method: 'POST', body: text, headers: auth });
    expect(get.status).toBe(200);
    expect(post.status).toBe(200);
    const getBody = await json(get);
    expect(getBody.data).toEqual((await json(post)).data);
    for (const field of [
      'x-service-version',
      'access-control-allow-origin',
      'access-control-expose-headers',
      'content-type',
      'timing-allow-origin',
      'vary',
    ])
      expect(get.headers.get(field), field).toBe(post.headers.get(field));
    expect(get.headers.get('content-length')).toBe(
      String(Buffer.byteLength(JSON.stringify(getBody))),
    );
    // HEAD: the same head, no body.
    const head = await fetch(`${served.url}/query?q=${encodeURIComponent(text)}`, {
      method: 'HEAD',
      headers: auth,
    });
    expect(head.status).toBe(200);
    expect(head.headers.get('etag')).toBe(get.headers.get('etag'));
    expect(await head.text()).toBe('');
    // Errors in the one envelope, whichever way the request came.
    const badGet = await fetch(`${served.url}/query?q=${encodeURIComponent('customers {')}`, {
      headers: auth,
    });
    const badPost = await fetch(`${served.url}/query`, {
      method: 'POST',
      body: 'customers {',
      headers: auth,
    });
    expect(badGet.status).toBe(400);
    expect(await json(badGet)).toEqual(await json(badPost));
    const twice = await fetch(`${served.url}/query?q=a&q=b`, { headers: auth });
    expect(twice.status).toBe(400);
    expect((await json(twice)).error.code).toBe('bad_request');
    const none = await fetch(`${served.url}/query`, { headers: auth });
    expect((await json(none)).error.code).toBe('bad_request');
    // Paths that only start like the route are no query route.
    for (const path of ['/query/', '/queryx?q=a', '/query/x?q=a'])
      expect((await fetch(`${served.url}${path}`, { headers: auth })).status, path).toBe(404);
  });

  it('serves /schema flagging primaryKey only on single-column keys', async () => {
    const response = await fetch(`${served.url}/schema`, {
      headers: { Authorization: `Bearer ${served.key}` },
    });
    const schema = await json(response);
    const table = (name: string) => schema.tables.find((t: { name: string }) => t.name === name);
    expect(
      table('customers').columns.find((c: { name: string }) => c.name === 'id').primaryKey,
    ).toBe(true);
    expect(table('pairs').columns.some((c: { primaryKey?: boolean }) => c.primaryKey)).toBe(false);
    expect(table('orders').relations).toEqual([
      expect.objectContaining({
        name: 'customer',
        kind: 'to-one',
        table: 'customers',
        columns: ['customer_id'],
      }),
    ]);
  });

  it('serves /openapi.json with one model per table in alphabetical order', async () => {
    const document = await json(fetch(`${served.url}/openapi.json`));
    const models = Object.keys(document.components.schemas);
    expect(models).toEqual([...models].sort());
    expect(models).toEqual(expect.arrayContaining(['customers', 'orders', 'pairs']));
  });

  it('serves /health, /health/detail and /metrics', async () => {
    expect(await json(fetch(`${served.url}/health`))).toEqual({ status: 'ok' });
    const auth = { headers: { Authorization: `Bearer ${served.adminKey}` } };
    const detail = await json(fetch(`${served.url}/health/detail`, auth));
    expect(detail).toMatchObject({
      status: 'ok',
      snapshot: { row_counts: { customers: 3, orders: 3, pairs: 2 } },
      memory: { cap_mb: null, cap_exceeded: false },
      replication: { mode: 'cdc', paused: false },
    });
    const metrics = await (await fetch(`${served.url}/metrics`, auth)).text();
    expect(metrics).toMatch(/replix_queries_total\{outcome="ok"\} [1-9]/);
    expect(metrics).toMatch(/replix_queries_total\{outcome="error"\} [1-9]/);
    expect(metrics).toContain('replix_table_rows{table="customers"} 3');
    expect(metrics).toContain('replix_query_duration_seconds_count');
    expect((await fetch(`${served.url}/metrics`)).status).toBe(401);
  });

  it('records replication pause and resume in /health/detail', async () => {
    const auth = { method: 'POST', headers: { Authorization: `Bearer ${served.adminKey}` } };
    expect(await json(fetch(`${served.url}/replication/pause`, auth))).toEqual({
      replication_paused: true,
    });
    const detail = await json(fetch(`${served.url}/health/detail`, { headers: auth.headers }));
    expect(detail.replication.paused).toBe(true);
    expect(await json(fetch(`${served.url}/replication/resume`, auth))).toEqual({
      replication_paused: false,
    });
  });
});

describe('reload and memory cap', () => {
  it('answers 409 reload_busy while a reload runs', async () => {
    const rows = Array.from({ length: 20000 }, (_, i) => `(${i}, 'row ${i}')`).join(',');
    const db = await testMariaDb().createDatabase(
      `CREATE TABLE t (id INT PRIMARY KEY, v TEXT); INSERT INTO t VALUES ${rows};`,
    );
    const served = await startTestInstance(db.url);
    try {
      const auth = { method: 'POST', headers: { Authorization: `Bearer ${served.adminKey}` } };
      const first = await fetch(`${served.url}/reload`, auth);
      const second = await fetch(`${served.url}/reload`, auth);
      expect(first.status).toBe(202);
      expect(await json(second)).toEqual({
        error: { code: 'reload_busy', message: expect.any(String) },
      });
      expect(second.status).toBe(409);
    } finally {
      await served.close();
    }
  });

  it('reports cap_exceeded and answers 409 cap_degraded over memory_cap_mb', async () => {
    const db = await testMariaDb().createDatabase(
      "CREATE TABLE t (id INT PRIMARY KEY, v TEXT); INSERT INTO t VALUES (1, 'a'), (2, 'b');",
    );
    const served = await startTestInstance(db.url, { memory_cap_mb: 0.0001 });
    try {
      expect(await json(fetch(`${served.url}/health`))).toEqual({
        status: 'cap_exceeded',
      });
      const reload = await fetch(`${served.url}/reload`, {
        method: 'POST',
        headers: { Authorization: `Bearer ${served.adminKey}` },
      });
      expect(reload.status).toBe(409);
      expect((await json(reload)).error.code).toBe('cap_degraded');
      expect((await served.json('t { id }')).data).toHaveLength(2);
    } finally {
      await served.close();
    }
  });

  it('never answers 304 to a tag from before a restart', async () => {
    const db = await testMariaDb().createDatabase(
      'CREATE TABLE t (id INT PRIMARY KEY); INSERT INTO t VALUES (1);',
    );
    const first = await startTestInstance(db.url);
    const etag = (await first.query('t { id }', { method: 'GET' })).headers.get('etag') as string;
    await first.close();
    const second = await startTestInstance(db.url);
    try {
      const response = await second.query('t { id }', {
        method: 'GET',
        headers: { 'If-None-Match': etag },
      });
      expect(response.status).toBe(200);
    } finally {
      await second.close();
    }
  });
});

describe('before the snapshot is loaded', () => {
  it('answers /health and /query with 503 and a loading status document', async () => {
    const db = await testMariaDb().createDatabase(
      'CREATE TABLE t (id INT PRIMARY KEY); INSERT INTO t VALUES (1);',
    );
    const connector = connectorFromUrl(db.url);
    const log = createLogger('silent');
    const schema = compileSchema(await connector.introspect(), parseSchemaConfig({}));
    const controller = new SnapshotController(connector, schema, {
      memoryCapMb: null,
      syncMode: 'cdc',
      log,
    });
    const secret = newKeySecret();
    const keyId = newKeyId();
    const app = await buildInstanceServer({
      controller,
      keys: new ApiKeyVerifier(secret, [keyId]),
      version: '0.1.0-test',
      maxBodyBytes: 1024,
      sync: { pause() {}, resume() {}, paused: false },
      log,
    });
    try {
      const health = await app.inject({ method: 'GET', url: '/health' });
      expect(health.statusCode).toBe(503);
      expect(health.json()).toMatchObject({
        status: 'loading',
        loading: { tables_done: 0, tables_total: 1, rows_loaded: 0 },
      });
      const query = await app.inject({
        method: 'POST',
        url: '/query',
        payload: 't { id }',
        headers: { authorization: `Bearer ${deriveApiKey(secret, keyId)}` },
      });
      expect(query.statusCode).toBe(503);
      expect(query.json().status).toBe('loading');
      await controller.start();
      expect((await app.inject({ method: 'GET', url: '/health' })).json()).toEqual({
        status: 'ok',
      });
    } finally {
      await app.close();
      await connector.close();
    }
  });
});
