import { createServer } from 'node:net';
import type { TestDatabase } from '@replix/testkit';
import { testMariaDb, testPostgres } from '@replix/testkit/vitest';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import {
  POSTGRES_STORE,
  startTestControlPlane,
  type TestControlPlane,
} from './control-plane-harness.ts';
import { setPlan } from './lifecycle-fixtures.ts';
import { SHOP_MYSQL, SHOP_SCHEMA } from './shop-fixture.ts';

const PASSWORD = 'db-Secret-pw!';

async function closedPort(): Promise<number> {
  const server = createServer();
  await new Promise<void>((resolve) => server.listen(0, '127.0.0.1', resolve));
  const port = (server.address() as { port: number }).port;
  await new Promise((resolve) => server.close(resolve));
  return port;
}

describe.each(POSTGRES_STORE)('databases on the %s store', (kind) => {
  let cp: TestControlPlane;
  let shop: TestDatabase;
  let pgShop: TestDatabase;
  let mariaUrl: URL;
  const mariaUser = `rx_db_${kind}`;
  const bodies: string[] = [];

  const call = async (
    method: string,
    path: string,
    options: { token?: string | undefined; body?: unknown } = {},
  ) => {
    const response = await cp.request(method, path, options);
    bodies.push(JSON.stringify(response.body ?? null));
    return response;
  };
  const connection = async (token: string, body: Record<string, unknown> = {}) => {
    const response = await call('POST', '/v1/connections', {
      token,
      body: {
        name: 'shop',
        host: mariaUrl.hostname,
        port: Number(mariaUrl.port),
        user: mariaUser,
        password: PASSWORD,
        ...body,
        // A closed port and a wrong password are saved on purpose, untested.
        ...('port' in body || 'password' in body ? { skipTest: true } : {}),
      },
    });
    expect(response.status).toBe(201);
    return response.body.id as string;
  };

  /** A saved connection to the PostgreSQL server of `pgShop` (it trusts local logins). */
  const postgresConnection = (token: string) => {
    const pgUrl = new URL(pgShop.url);
    return call('POST', '/v1/connections', {
      token,
      body: {
        name: 'pg',
        backend: 'postgres',
        host: pgUrl.hostname,
        port: Number(pgUrl.port),
        user: 'postgres',
        password: 'trusted-anyway',
        tlsMode: 'disable',
      },
    });
  };

  beforeAll(async () => {
    cp = await startTestControlPlane(kind);
    shop = await testMariaDb().createDatabase(SHOP_MYSQL);
    mariaUrl = new URL(shop.url);
    await testMariaDb().exec(
      `DROP USER IF EXISTS '${mariaUser}'@'%'; CREATE USER '${mariaUser}'@'%' IDENTIFIED BY '${PASSWORD}'; GRANT SELECT ON \`${shop.name}\`.* TO '${mariaUser}'@'%'`,
    );
    pgShop = await testPostgres().createDatabase(
      `CREATE TABLE customers (id int PRIMARY KEY, name text);
       CREATE TABLE orders (id int PRIMARY KEY, customer_id int REFERENCES customers(id));`,
    );
  });
  afterAll(async () => {
    await cp?.close();
    await shop?.drop();
    await pgShop?.drop();
    await testMariaDb().exec(`DROP USER IF EXISTS '${mariaUser}'@'%'`);
  });

  it('answers 401 without a token', async () => {
    const id = '00000000-0000-4000-8000-000000000000';
    for (const [method, path] of [
      ['GET', '/v1/databases'],
      ['POST', '/v1/databases'],
      ['GET', `/v1/databases/${id}`],
      ['PATCH', `/v1/databases/${id}`],
      ['GET', `/v1/databases/${id}/schema`],
    ] as const) {
      const response = await call(method, path, { body: method === 'GET' ? undefined : {} });
      expect(response.status, `${method} ${path}`).toBe(401);
    }
  });

  it('creates a draft database with defaults and a fresh key secret', async () => {
    const token = await cp.token('create-db@example.com');
    const connectionId = await connection(token);
    const created = await call('POST', '/v1/databases', {
      token,
      body: { name: 'shop', connectionId, sourceSchema: shop.name },
    });
    expect(created.status).toBe(201);
    expect(created.body).toEqual({
      id: expect.any(String),
      name: 'shop',
      connectionId,
      sourceSchema: shop.name,
      schemaConfig: {},
      region: 'eu-west-1',
      instanceSize: 'xs',
      replicas: 1,
      // The connection's user may only SELECT: CDC cannot run, so the database polls at the
      // plan's fastest rate and says why.
      syncMode: 'poll',
      syncInterval: 60,
      syncModeReason: expect.stringMatching(
        /^Poll: the source is not set up for change data capture \(Grant the user REPLICATION SLAVE .*\), so CDC is not available\.$/,
      ),
      logLevel: 'info',
      safetyNet: 0,
      status: 'draft',
      replicationPaused: false,
      currentBuildId: null,
      lastError: null,
      endpointUrl: null,
      createdAt: expect.any(String),
      updatedAt: expect.any(String),
    });
    const row = await cp.context.db
      .selectFrom('databases')
      .selectAll()
      .where('id', '=', created.body.id)
      .executeTakeFirstOrThrow();
    expect(row.goal).toBeNull();
    expect(cp.context.secrets.openBuffer(row.key_secret_enc)).toHaveLength(32);
    const second = await call('POST', '/v1/databases', {
      token,
      body: { name: 'other', connectionId, sourceSchema: shop.name },
    });
    const secondRow = await cp.context.db
      .selectFrom('databases')
      .select('key_secret_enc')
      .where('id', '=', second.body.id)
      .executeTakeFirstOrThrow();
    expect(cp.context.secrets.openBuffer(secondRow.key_secret_enc)).not.toEqual(
      cp.context.secrets.openBuffer(row.key_secret_enc),
    );

    const list = await call('GET', '/v1/databases', { token });
    expect(list.body.map((d: { name: string }) => d.name)).toEqual(['shop', 'other']);
    expect((await call('GET', `/v1/databases/${created.body.id}`, { token })).body).toEqual(
      created.body,
    );
    const events = await cp.context.db
      .selectFrom('audit_events')
      .select(['event_type', 'database_id', 'payload'])
      .where('entity_id', '=', created.body.id)
      .execute();
    expect(events).toEqual([
      {
        event_type: 'database.created',
        database_id: created.body.id,
        payload: {
          name: 'shop',
          connectionId,
          region: 'eu-west-1',
          replicas: 1,
          instanceSize: 'xs',
        },
      },
    ]);
  });

  it('takes sync settings from the schema config unless given', async () => {
    const token = await cp.token('sync-db@example.com');
    const connectionId = await connection(token);
    const fromConfig = await call('POST', '/v1/databases', {
      token,
      body: {
        name: 'polled',
        connectionId,
        sourceSchema: shop.name,
        schemaConfig: { sync: { mode: 'poll', interval: 120, safety_net: 600 } },
      },
    });
    expect(fromConfig.body).toMatchObject({ syncMode: 'poll', syncInterval: 120, safetyNet: 600 });
    // Poll mode without an interval gets the plan's minimum (free: 60 s).
    const minimum = await call('POST', '/v1/databases', {
      token,
      body: { name: 'poll-min', connectionId, sourceSchema: shop.name, syncMode: 'poll' },
    });
    expect(minimum.body).toMatchObject({ syncMode: 'poll', syncInterval: 60 });
    const tooFast = await call('POST', '/v1/databases', {
      token,
      body: {
        name: 'fast',
        connectionId,
        sourceSchema: shop.name,
        syncMode: 'poll',
        syncInterval: 10,
      },
    });
    expect(tooFast.status).toBe(400);
    expect(tooFast.body).toEqual({
      error: 'validation_failed',
      message: expect.stringContaining('at least 60 seconds'),
    });
    expect(tooFast.body.message).toContain('syncInterval');
  });

  it('validates the body and the schema config, naming the field or key path', async () => {
    const token = await cp.token('invalid-db@example.com');
    const connectionId = await connection(token);
    const base = { name: 'x', connectionId, sourceSchema: shop.name };
    const cases: [Record<string, unknown>, string][] = [
      [{ ...base, name: '' }, 'body.name'],
      [{ ...base, connectionId: 'nope' }, 'body.connectionId'],
      [{ ...base, sourceSchema: undefined }, 'body.sourceSchema'],
      [{ ...base, instanceSize: 'xxl' }, 'body.instanceSize'],
      [{ ...base, syncMode: 'push' }, 'body.syncMode'],
      [{ ...base, logLevel: 'loud' }, 'body.logLevel'],
      [{ ...base, safetyNet: -1 }, 'body.safetyNet'],
      [{ ...base, syncInterval: 0 }, 'body.syncInterval'],
      [{ ...base, schemaConfig: 'tables' }, 'body.schemaConfig'],
    ];
    for (const [body, field] of cases) {
      const response = await call('POST', '/v1/databases', { token, body });
      expect(response.status, field).toBe(400);
      expect(response.body.error, field).toBe('validation_failed');
      expect(response.body.message).toContain(field);
    }
    const badConfig = await call('POST', '/v1/databases', {
      token,
      body: {
        ...base,
        schemaConfig: { tables: [{ name: 'orders', colums: [] }], sync: { mode: 'x' } },
      },
    });
    expect(badConfig.status).toBe(400);
    expect(badConfig.body.error).toBe('invalid_schema_config');
    expect(badConfig.body.message).toContain('tables[0].colums');
    expect(badConfig.body.message).toContain('sync.mode');
  });

  it("answers 404 naming the connection when it is another account's or gone", async () => {
    const owner = await cp.token('conn-owner@example.com');
    const other = await cp.token('conn-other@example.com');
    const connectionId = await connection(owner);
    for (const id of [connectionId, '00000000-0000-4000-8000-000000000000']) {
      const response = await call('POST', '/v1/databases', {
        token: other,
        body: { name: 'x', connectionId: id, sourceSchema: shop.name },
      });
      expect(response.status).toBe(404);
      expect(response.body).toEqual({ error: 'not_found', message: 'Connection not found.' });
    }
  });

  it('enforces the plan: size, region and number of databases', async () => {
    const email = 'plan-db@example.com';
    const token = await cp.token(email);
    const connectionId = await connection(token);
    const base = { connectionId, sourceSchema: shop.name };
    const big = await call('POST', '/v1/databases', {
      token,
      body: { ...base, name: 'big', instanceSize: 'm' },
    });
    expect(big.status).toBe(403);
    expect(big.body).toEqual({ error: 'plan_limit', message: expect.stringContaining('m') });
    const away = await call('POST', '/v1/databases', {
      token,
      body: { ...base, name: 'away', region: 'us-east-1' },
    });
    expect(away.status).toBe(403);
    expect(away.body.error).toBe('plan_limit');
    for (const name of ['a', 'b', 'c']) {
      expect(
        (await call('POST', '/v1/databases', { token, body: { ...base, name, instanceSize: 's' } }))
          .status,
      ).toBe(201);
    }
    const fourth = await call('POST', '/v1/databases', { token, body: { ...base, name: 'd' } });
    expect(fourth.status).toBe(403);
    expect(fourth.body).toEqual({ error: 'plan_limit', message: expect.stringContaining('3') });

    await setPlan(cp, email, 'teams');
    const allowed = await call('POST', '/v1/databases', {
      token,
      body: { ...base, name: 'big', instanceSize: 'l', region: 'us-east-1' },
    });
    expect(allowed.status).toBe(201);
    expect(allowed.body).toMatchObject({ instanceSize: 'l', region: 'us-east-1' });
    // The region defaults to the connection's.
    const usConnection = await connection(token, { defaultRegion: 'us-east-1' });
    const defaulted = await call('POST', '/v1/databases', {
      token,
      body: { name: 'us', connectionId: usConnection, sourceSchema: shop.name },
    });
    expect(defaulted.body.region).toBe('us-east-1');
  });

  it('refuses a source schema the source answers it does not have, naming those it has', async () => {
    const token = await cp.token('no-schema@example.com');
    const connectionId = await connection(token);
    const missing = await call('POST', '/v1/databases', {
      token,
      body: { name: 'nope', connectionId, sourceSchema: 'newcomer_nope' },
    });
    expect(missing.status).toBe(400);
    expect(missing.body.error).toBe('validation_failed');
    expect(missing.body.message).toContain(
      'body.sourceSchema names the database "newcomer_nope", which the source does not have or this user cannot open: it has',
    );
    // The user sees only the shop (its one grant): that is the name offered.
    expect(missing.body.message).toContain(`"${shop.name}"`);
    const created = await call('POST', '/v1/databases', {
      token,
      body: { name: 'shop', connectionId, sourceSchema: shop.name },
    });
    expect(created.status).toBe(201);
    const patched = await call('PATCH', `/v1/databases/${created.body.id}`, {
      token,
      body: { sourceSchema: 'newcomer_nope' },
    });
    expect(patched.status).toBe(400);
    expect(patched.body.message).toContain('"newcomer_nope"');

    // PostgreSQL logs in to the database it names: one that does not exist fails that check.
    const pgConnection = await postgresConnection(token);
    const pgMissing = await call('POST', '/v1/databases', {
      token,
      body: {
        name: 'pg',
        connectionId: pgConnection.body.id,
        sourceSchema: 'newcomer_nope/public',
      },
    });
    expect(pgMissing.status).toBe(400);
    expect(pgMissing.body.message).toContain(
      'body.sourceSchema names the database "newcomer_nope", which the source does not have or this user cannot open',
    );
  });

  it('patches settings as pending changes and audits the changed field names', async () => {
    const token = await cp.token('patch-db@example.com');
    const connectionId = await connection(token);
    const created = await call('POST', '/v1/databases', {
      token,
      body: { name: 'shop', connectionId, sourceSchema: shop.name },
    });
    const id = created.body.id;
    const patched = await call('PATCH', `/v1/databases/${id}`, {
      token,
      body: {
        name: 'renamed',
        schemaConfig: { tables: [{ name: 'orders' }] },
        logLevel: 'debug',
        safetyNet: 300,
      },
    });
    expect(patched.status).toBe(200);
    expect(patched.body).toMatchObject({
      name: 'renamed',
      schemaConfig: { tables: [{ name: 'orders' }] },
      logLevel: 'debug',
      safetyNet: 300,
      status: 'draft',
      instanceSize: 'xs',
    });
    const event = await cp.context.db
      .selectFrom('audit_events')
      .select('payload')
      .where('entity_id', '=', id)
      .where('event_type', '=', 'database.updated')
      .executeTakeFirstOrThrow();
    expect(event.payload).toEqual({ changed: ['schemaConfig', 'name', 'logLevel', 'safetyNet'] });

    const slowPoll = await call('PATCH', `/v1/databases/${id}`, {
      token,
      body: { syncMode: 'poll' },
    });
    // Switching to poll without an interval takes the plan's fastest poll, not CDC's 1 s.
    expect(slowPoll.status).toBe(200);
    expect(slowPoll.body).toMatchObject({
      syncMode: 'poll',
      syncInterval: 60,
      syncModeReason: null,
    });
    const tooFast = await call('PATCH', `/v1/databases/${id}`, {
      token,
      body: { syncInterval: 5 },
    });
    expect(tooFast.status).toBe(400);
    expect(tooFast.body.message).toContain('at least 60 seconds');
    const poll = await call('PATCH', `/v1/databases/${id}`, {
      token,
      body: { syncMode: 'poll', syncInterval: 90 },
    });
    expect(poll.body).toMatchObject({ syncMode: 'poll', syncInterval: 90 });

    for (const [body, field] of [
      [{ instanceSize: 's' }, 'instanceSize'],
      [{ region: 'us-east-1' }, 'region'],
      [{ connectionId }, 'connectionId'],
    ] as const) {
      const refused = await call('PATCH', `/v1/databases/${id}`, { token, body });
      expect(refused.status).toBe(400);
      expect(refused.body.message).toContain(field);
    }
    const badConfig = await call('PATCH', `/v1/databases/${id}`, {
      token,
      body: { schemaConfig: { where: 'id > 1' } },
    });
    expect(badConfig.status).toBe(400);
    expect(badConfig.body).toEqual({
      error: 'invalid_schema_config',
      message: expect.stringContaining('where_columns'),
    });
  });

  it("reports another account's database as not found", async () => {
    const owner = await cp.token('db-owner@example.com');
    const other = await cp.token('db-other@example.com');
    const connectionId = await connection(owner);
    const created = await call('POST', '/v1/databases', {
      token: owner,
      body: { name: 'mine', connectionId, sourceSchema: shop.name },
    });
    for (const [method, path] of [
      ['GET', `/v1/databases/${created.body.id}`],
      ['PATCH', `/v1/databases/${created.body.id}`],
      ['GET', `/v1/databases/${created.body.id}/schema`],
    ] as const) {
      const response = await call(method, path, {
        token: other,
        body: method === 'PATCH' ? { name: 'stolen' } : undefined,
      });
      expect(response.status, `${method} ${path}`).toBe(404);
      expect(response.body).toEqual({ error: 'not_found', message: 'Database not found.' });
    }
    expect((await call('GET', '/v1/databases', { token: other })).body).toEqual([]);
  });

  it('introspects a MariaDB source: columns, keys and foreign-key relations', async () => {
    const token = await cp.token('schema-db@example.com');
    const connectionId = await connection(token);
    const created = await call('POST', '/v1/databases', {
      token,
      body: { name: 'shop', connectionId, sourceSchema: shop.name },
    });
    const response = await call('GET', `/v1/databases/${created.body.id}/schema`, { token });
    expect(response.status).toBe(200);
    expect(response.body).toEqual(SHOP_SCHEMA);
  });

  it('introspects a PostgreSQL source named by its database', async () => {
    const token = await cp.token('schema-pg@example.com');
    const pgConnection = await postgresConnection(token);
    const created = await call('POST', '/v1/databases', {
      token,
      body: { name: 'pg', connectionId: pgConnection.body.id, sourceSchema: pgShop.name },
    });
    const response = await call('GET', `/v1/databases/${created.body.id}/schema`, { token });
    expect(response.status).toBe(200);
    expect(response.body.tables.map((t: { name: string }) => t.name)).toEqual([
      'customers',
      'orders',
    ]);
    expect(response.body.tables[1].relations).toEqual([
      {
        column: 'customer_id',
        derivedName: 'customer',
        referencedTable: 'customers',
        referencedColumn: 'id',
        constraintName: 'orders_customer_id_fkey',
      },
    ]);
  });

  it('answers 502 source_unavailable when the source cannot be reached or refuses', async () => {
    const token = await cp.token('unreachable-db@example.com');
    const down = await connection(token, { port: await closedPort() });
    const wrong = await connection(token, { password: 'wrong-password-here' });
    for (const [connectionId, message] of [
      [down, 'Could not connect to the source database (ECONNREFUSED).'],
      [wrong, 'Authentication to the source database failed.'],
    ] as const) {
      const created = await call('POST', '/v1/databases', {
        token,
        body: { name: 'down', connectionId, sourceSchema: shop.name },
      });
      const response = await call('GET', `/v1/databases/${created.body.id}/schema`, { token });
      expect(response.status).toBe(502);
      expect(response.body).toEqual({ error: 'source_unavailable', message });
    }
  });

  it('never returns a password or key secret', () => {
    expect(bodies.length).toBeGreaterThan(20);
    for (const body of bodies) {
      expect(body).not.toContain(PASSWORD);
      expect(body).not.toContain('wrong-password-here');
      expect(body).not.toContain('key_secret');
    }
  });
});
