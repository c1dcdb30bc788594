import { createServer } from 'node:net';
import type { TestDatabase } from '@replix/testkit';
import { testMariaDb, testPostgres } from '@replix/testkit/vitest';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { startThrowawaySshd, type ThrowawaySshd } from '../../sources/test/throwaway-sshd.ts';
import {
  EMBEDDED_STORE,
  startTestControlPlane,
  type TestControlPlane,
} from './control-plane-harness.ts';
import { SHOP_MYSQL, SHOP_SCHEMA } from './shop-fixture.ts';

// POST /v1/connections/{id}/test and GET /v1/connections/{id}/schema: the connection test and
// the schema introspection of a saved connection, with its stored (sealed) credentials.

const PASSWORD = 'Saved-Pa$$:/@?#-secret';
const WRONG_PASSWORD = 'not-the-Saved-password';

async function closedPort(): Promise<number> {
  const server = createServer();
  await new Promise<void>((resolve) => server.listen(0, '127.0.0.1', resolve));
  const port = (server.address() as { port: number }).port;
  await new Promise((resolve) => server.close(resolve));
  return port;
}

describe.each(EMBEDDED_STORE)('saved connections on the %s store', (kind) => {
  let cp: TestControlPlane;
  let sshd: ThrowawaySshd;
  let shop: TestDatabase;
  let pgShop: TestDatabase;
  let mariaUrl: URL;
  let pgUrl: URL;
  const mariaUser = `rx_saved_${kind}`;
  /** Every response body, to prove no secret is ever in one. */
  const bodies: string[] = [];
  /** Error answers, which must name no host or user either. */
  const failures: string[] = [];

  const call = async (
    method: string,
    path: string,
    options: { token?: string | undefined; body?: unknown } = {},
  ) => {
    const response = await cp.request(method, path, options);
    const text = JSON.stringify(response.body ?? null);
    bodies.push(text);
    if (response.status >= 400 || response.body?.ok === false) failures.push(text);
    return response;
  };
  /**
   * Saves a MariaDB connection to the shop server and answers its id. With overrides (several
   * wrong on purpose) it is saved untested, so the saved connection's test is what answers.
   */
  const saved = async (token: string, body: Record<string, unknown> = {}) => {
    const response = await call('POST', '/v1/connections', {
      token,
      body: {
        name: 'shop',
        host: mariaUrl.hostname,
        port: Number(mariaUrl.port),
        user: mariaUser,
        password: PASSWORD,
        ...body,
        ...(Object.keys(body).length > 0 ? { skipTest: true } : {}),
      },
    });
    expect(response.status).toBe(201);
    return response.body.id as string;
  };
  const savedPostgres = async (token: string) => {
    const response = await call('POST', '/v1/connections', {
      token,
      body: {
        name: 'pg',
        backend: 'postgres',
        host: pgUrl.hostname,
        port: Number(pgUrl.port),
        user: 'postgres',
        password: 'unused-by-trust-auth',
        tlsMode: 'disable',
      },
    });
    expect(response.status).toBe(201);
    return response.body.id as string;
  };
  const schemaPath = (id: string, sourceSchema: string) =>
    `/v1/connections/${id}/schema?sourceSchema=${encodeURIComponent(sourceSchema)}`;

  beforeAll(async () => {
    cp = await startTestControlPlane(kind);
    sshd = await startThrowawaySshd();
    shop = await testMariaDb().createDatabase(SHOP_MYSQL);
    mariaUrl = new URL(shop.url);
    await testMariaDb().exec(
      `DROP USER IF EXISTS '${mariaUser}'@'%'; CREATE USER '${mariaUser}'@'%' IDENTIFIED BY '${PASSWORD}'; GRANT SELECT, REPLICATION SLAVE, REPLICATION CLIENT ON *.* TO '${mariaUser}'@'%'`,
    );
    pgShop = await testPostgres().createDatabase(
      `CREATE SCHEMA sales;
       CREATE TABLE sales.customers (id int PRIMARY KEY, name text);
       CREATE TABLE sales.orders (id int PRIMARY KEY, customer_id int REFERENCES sales.customers(id));`,
    );
    pgUrl = new URL(pgShop.url);
  });
  afterAll(async () => {
    await cp?.close();
    await sshd?.stop();
    await shop?.drop();
    await pgShop?.drop();
    await testMariaDb().exec(`DROP USER IF EXISTS '${mariaUser}'@'%'`);
  });

  it('answers 401 without a token', async () => {
    const id = '00000000-0000-4000-8000-000000000000';
    const test = await call('POST', `/v1/connections/${id}/test`, { body: {} });
    expect(test.status).toBe(401);
    const schema = await call('GET', schemaPath(id, 'shop'));
    expect(schema.status).toBe(401);
  });

  describe('POST /v1/connections/{id}/test', () => {
    it('reports a ready MariaDB with the stored credentials: latency, schemas, size, binlog', async () => {
      const token = await cp.token('saved-test@example.com');
      const id = await saved(token);
      // No body at all, and an empty one, are the same test.
      for (const body of [undefined, {}]) {
        const response = await call('POST', `/v1/connections/${id}/test`, { token, body });
        expect(response.status).toBe(200);
        expect(response.body).toEqual({
          ok: true,
          latencyMs: expect.any(Number),
          estimatedSizeGb: expect.any(Number),
          availableSchemas: expect.arrayContaining([shop.name]),
          binlog: { logBin: true, format: 'ROW', serverId: 1, ready: true, issues: [] },
        });
        expect(response.body.availableSchemas).not.toContain('information_schema');
      }
    });

    it('answers ok:false with the reason for a wrong stored password or a closed port', async () => {
      const token = await cp.token('saved-test-fail@example.com');
      const wrong = await saved(token, { password: WRONG_PASSWORD });
      const down = await saved(token, { port: await closedPort() });
      const wrongAnswer = await call('POST', `/v1/connections/${wrong}/test`, { token, body: {} });
      expect(wrongAnswer.status).toBe(200);
      expect(wrongAnswer.body).toEqual({
        ok: false,
        error: 'Authentication to the source database failed.',
        failedCheck: 'login',
      });
      const downAnswer = await call('POST', `/v1/connections/${down}/test`, { token, body: {} });
      expect(downAnswer.body).toEqual({
        ok: false,
        error: 'Could not connect to the source database (ECONNREFUSED).',
        failedCheck: 'network',
      });
      // A new password makes the same connection test ok.
      await call('PATCH', `/v1/connections/${wrong}`, { token, body: { password: PASSWORD } });
      const fixed = await call('POST', `/v1/connections/${wrong}/test`, { token, body: {} });
      expect(fixed.body.ok).toBe(true);
    });

    it('logs in to the given database on PostgreSQL', async () => {
      const token = await cp.token('saved-test-pg@example.com');
      const id = await savedPostgres(token);
      const response = await call('POST', `/v1/connections/${id}/test`, {
        token,
        body: { database: pgShop.name },
      });
      expect(response.body).toEqual({
        ok: true,
        latencyMs: expect.any(Number),
        estimatedSizeGb: expect.any(Number),
        availableSchemas: expect.arrayContaining([pgShop.name, 'postgres']),
        binlog: { logBin: true, format: 'logical', serverId: null, ready: true, issues: [] },
      });
      const missing = await call('POST', `/v1/connections/${id}/test`, {
        token,
        body: { database: 'no_such_database' },
      });
      expect(missing.body).toEqual({
        ok: false,
        error:
          'The source database "no_such_database" does not exist or is not accessible to this user.',
        failedCheck: 'database',
      });
    });

    it('goes through the stored SSH tunnel, and reports a refused key as ok:false', async () => {
      const token = await cp.token('saved-test-ssh@example.com');
      const ssh = { host: sshd.host, port: sshd.port, user: sshd.user };
      const tunnelled = await saved(token, { ssh: { ...ssh, privateKey: sshd.privateKey } });
      const response = await call('POST', `/v1/connections/${tunnelled}/test`, { token });
      expect(response.body).toMatchObject({
        ok: true,
        availableSchemas: expect.arrayContaining([shop.name]),
        binlog: { ready: true },
      });
      const stranger = await saved(token, { ssh: { ...ssh, privateKey: sshd.strangerKey } });
      const refused = await call('POST', `/v1/connections/${stranger}/test`, { token });
      expect(refused.body).toEqual({
        ok: false,
        error: 'The SSH server refused the tunnel user or private key.',
        failedCheck: 'ssh',
      });
    });

    it('applies the stored TLS mode exactly as the raw test does', async () => {
      const token = await cp.token('saved-test-tls@example.com');
      const id = await saved(token, { tlsMode: 'verify-full' });
      const savedAnswer = await call('POST', `/v1/connections/${id}/test`, { token });
      const rawAnswer = await call('POST', '/v1/connections/test-connection', {
        token,
        body: {
          mysqlHost: mariaUrl.hostname,
          mysqlPort: Number(mariaUrl.port),
          mysqlUser: mariaUser,
          mysqlPassword: PASSWORD,
          tlsMode: 'verify-full',
        },
      });
      // The test server's certificate (if it has TLS at all) is not publicly trusted.
      expect(savedAnswer.body).toEqual({
        ok: false,
        error: expect.any(String),
        failedCheck: expect.any(String),
      });
      expect(savedAnswer.body).toEqual(rawAnswer.body);
    });

    it('refuses an unknown body field, and records no audit event', async () => {
      const token = await cp.token('saved-test-body@example.com');
      const id = await saved(token);
      const refused = await call('POST', `/v1/connections/${id}/test`, {
        token,
        body: { password: 'guess' },
      });
      expect(refused.status).toBe(400);
      expect(refused.body).toEqual({ error: 'validation_failed', message: expect.any(String) });
      expect(refused.body.message).toContain('password');
      const empty = await call('POST', `/v1/connections/${id}/test`, {
        token,
        body: { database: '' },
      });
      expect(empty.status).toBe(400);
      expect(empty.body.message).toContain('body.database');
      await call('POST', `/v1/connections/${id}/test`, { token });
      const events = await cp.context.db
        .selectFrom('audit_events')
        .select('event_type')
        .where('entity_id', '=', id)
        .execute();
      expect(events.map((e) => e.event_type)).toEqual(['connection.created']);
    });
  });

  describe('GET /v1/connections/{id}/schema', () => {
    it('lists the tables, columns and foreign keys of a MariaDB source schema', async () => {
      const token = await cp.token('saved-schema@example.com');
      const id = await saved(token);
      const response = await call('GET', schemaPath(id, shop.name), { token });
      expect(response.status).toBe(200);
      expect(response.body).toEqual(SHOP_SCHEMA);
      // The very answer a database on this connection and schema gets.
      const database = await call('POST', '/v1/databases', {
        token,
        body: { name: 'shop', connectionId: id, sourceSchema: shop.name },
      });
      const viaDatabase = await call('GET', `/v1/databases/${database.body.id}/schema`, { token });
      expect(viaDatabase.body).toEqual(response.body);
    });

    it('reads a PostgreSQL `<database>/<schema>`', async () => {
      const token = await cp.token('saved-schema-pg@example.com');
      const id = await savedPostgres(token);
      const response = await call('GET', schemaPath(id, `${pgShop.name}/sales`), { token });
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
      // The database's default schema (public) has no tables here; an unknown schema in an
      // existing database has none either.
      for (const sourceSchema of [pgShop.name, `${pgShop.name}/no_such_schema`]) {
        const other = await call('GET', schemaPath(id, sourceSchema), { token });
        expect(other.status, sourceSchema).toBe(200);
        expect(other.body, sourceSchema).toEqual({ tables: [] });
      }
    });

    it('reads through the stored SSH tunnel', async () => {
      const token = await cp.token('saved-schema-ssh@example.com');
      const id = await saved(token, {
        ssh: { host: sshd.host, port: sshd.port, user: sshd.user, privateKey: sshd.privateKey },
      });
      const response = await call('GET', schemaPath(id, shop.name), { token });
      expect(response.status).toBe(200);
      expect(response.body).toEqual(SHOP_SCHEMA);
    });

    it('answers 502 source_unavailable as the database route does: unknown schema, refused, down', async () => {
      const token = await cp.token('saved-schema-fail@example.com');
      const good = await saved(token);
      const wrong = await saved(token, { password: WRONG_PASSWORD });
      const down = await saved(token, { port: await closedPort() });
      for (const [id, sourceSchema, message] of [
        [
          good,
          'no_such_schema',
          'The source database "no_such_schema" does not exist or is not accessible to this user.',
        ],
        [wrong, shop.name, 'Authentication to the source database failed.'],
        [down, shop.name, 'Could not connect to the source database (ECONNREFUSED).'],
      ] as const) {
        const response = await call('GET', schemaPath(id, sourceSchema), { token });
        expect(response.status, message).toBe(502);
        expect(response.body).toEqual({ error: 'source_unavailable', message });
        const database = await call('POST', '/v1/databases', {
          token,
          body: { name: 'same', connectionId: id, sourceSchema },
        });
        if (sourceSchema === 'no_such_schema') {
          // The source answered that it has no such database: creating one over it is refused.
          expect(database.status).toBe(400);
          expect(database.body.message).toContain(
            '"no_such_schema", which the source does not have',
          );
          continue;
        }
        const viaDatabase = await call('GET', `/v1/databases/${database.body.id}/schema`, {
          token,
        });
        expect(viaDatabase.status).toBe(502);
        expect(viaDatabase.body).toEqual(response.body);
      }
    });

    it('answers 400 for a missing or empty sourceSchema', async () => {
      const token = await cp.token('saved-schema-400@example.com');
      const id = await saved(token);
      for (const path of [`/v1/connections/${id}/schema`, schemaPath(id, '')]) {
        const response = await call('GET', path, { token });
        expect(response.status, path).toBe(400);
        expect(response.body).toEqual({
          error: 'validation_failed',
          message: expect.stringContaining('sourceSchema'),
        });
      }
    });

    it('may be read by a member, who may not run the test', async () => {
      const owner = await cp.token('saved-owner@example.com');
      const id = await saved(owner);
      const invited = await call('POST', '/v1/team/invitations', {
        token: owner,
        body: { email: 'saved-member@example.com', role: 'member' },
      });
      expect(invited.status).toBe(201);
      const member = await cp.token('saved-member@example.com');
      const accepted = await call('POST', '/v1/team/invitations/accept', {
        token: member,
        body: { token: invited.body.token },
      });
      expect(accepted.status).toBe(200);
      const schema = await call('GET', schemaPath(id, shop.name), { token: member });
      expect(schema.status).toBe(200);
      expect(schema.body).toEqual(SHOP_SCHEMA);
      const test = await call('POST', `/v1/connections/${id}/test`, { token: member });
      expect(test.status).toBe(403);
      expect(test.body.error).toBe('forbidden');
    });
  });

  it("reports another account's connection, or an unknown one, as not found", async () => {
    const owner = await cp.token('saved-mine@example.com');
    const other = await cp.token('saved-theirs@example.com');
    const id = await saved(owner);
    const unknown = '00000000-0000-4000-8000-000000000000';
    for (const [token, connectionId] of [
      [other, id],
      [owner, unknown],
    ] as const) {
      const test = await call('POST', `/v1/connections/${connectionId}/test`, { token });
      expect(test.status).toBe(404);
      expect(test.body).toEqual({ error: 'not_found', message: 'Connection not found.' });
      const schema = await call('GET', schemaPath(connectionId, shop.name), { token });
      expect(schema.status).toBe(404);
      expect(schema.body).toEqual({ error: 'not_found', message: 'Connection not found.' });
    }
    // A deleted connection is gone for both routes too.
    await call('DELETE', `/v1/connections/${id}`, { token: owner });
    const test = await call('POST', `/v1/connections/${id}/test`, { token: owner });
    expect(test.status).toBe(404);
  });

  it('never puts a password, key, host or user in a response, nor a host or SQL in an error', () => {
    expect(bodies.length).toBeGreaterThan(30);
    for (const body of bodies) {
      for (const secret of [PASSWORD, WRONG_PASSWORD, 'unused-by-trust-auth']) {
        expect(body).not.toContain(secret);
      }
      expect(body).not.toContain('PRIVATE KEY');
    }
    expect(failures.length).toBeGreaterThan(10);
    for (const body of failures) {
      expect(body).not.toContain(mariaUrl.hostname);
      expect(body).not.toContain(pgUrl.hostname);
      expect(body).not.toContain(mariaUser);
      expect(body).not.toMatch(/SELECT|information_schema|at .*\.ts/i);
    }
  });
});
