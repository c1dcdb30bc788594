import {
  type DatabaseServer,
  mariaDbAdmin,
  postgresAdmin,
  startDedicatedServer,
  type TestDatabase,
} from '@replix/testkit';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import {
  connectionTarget,
  withSourceConnector,
} from '../src/application/source-access/connection-target.ts';
import { startTestControlPlane, type TestControlPlane } from './control-plane-harness.ts';

type Engine = 'mariadb' | 'postgres';

// A connection's tlsMode, end to end: the connection test, and the source URL every connector
// (schema introspection, builds, instances) is made from, against servers whose user may only
// connect over TLS. The store does not matter here, so only the embedded one is used.
describe.each<Engine>(['mariadb', 'postgres'])('a connection tlsMode on %s', (engine) => {
  let cp: TestControlPlane;
  let server: DatabaseServer;
  let db: TestDatabase;
  let token: string;
  const backend = engine === 'mariadb' ? 'mysql' : 'postgres';

  beforeAll(async () => {
    [cp, server] = await Promise.all([
      startTestControlPlane('pglite'),
      startDedicatedServer(engine, { tls: true }),
    ]);
    const admin = engine === 'mariadb' ? mariaDbAdmin(server.url) : postgresAdmin(server.url);
    db = await admin.createDatabase('CREATE TABLE orders (id INT PRIMARY KEY)');
    token = await cp.token(`tls-${engine}@example.com`);
  });
  afterAll(async () => {
    await cp?.close();
    await server?.stop();
  });

  const tlsUser = () => {
    if (!server.tls) throw new Error('the server has no TLS');
    return server.tls;
  };

  const testConnection = async (tlsMode: string) =>
    (
      await cp.request('POST', '/v1/connections/test-connection', {
        token,
        body: {
          backend,
          mysqlHost: '127.0.0.1',
          mysqlPort: server.port,
          mysqlUser: tlsUser().user,
          mysqlPassword: tlsUser().password,
          ...(engine === 'postgres' ? { database: db.name } : {}),
          tlsMode,
        },
      })
    ).body as { ok: boolean; error?: string; availableSchemas?: string[] };

  it('test-connection: require connects, verify-full rejects the unknown CA, disable is refused', async () => {
    expect(await testConnection('require')).toMatchObject({
      ok: true,
      availableSchemas: expect.arrayContaining([db.name]),
    });
    const unverified = await testConnection('verify-full');
    expect(unverified.ok).toBe(false);
    expect(unverified.error).toMatch(/^The source server's TLS certificate is not trusted/);
    const plain = await testConnection('disable');
    expect(plain.ok).toBe(false);
    for (const body of [unverified, plain]) {
      expect(JSON.stringify(body)).not.toContain(tlsUser().password);
    }
  });

  it("connectors read the connection's tlsMode from its source URL", async () => {
    const created = await cp.request('POST', '/v1/connections', {
      token,
      body: {
        name: `tls ${engine}`,
        backend,
        host: '127.0.0.1',
        port: server.port,
        user: tlsUser().user,
        password: tlsUser().password,
        tlsMode: 'require',
      },
    });
    expect(created.status).toBe(201);
    const id = (created.body as { id: string }).id;
    const row = async () =>
      cp.context.db
        .selectFrom('connections')
        .selectAll()
        .where('id', '=', id)
        .executeTakeFirstOrThrow();
    const introspect = async () =>
      withSourceConnector(connectionTarget(await row(), cp.context.secrets, db.name), async (c) =>
        (await c.introspect()).tables.map((table) => table.name),
      );
    expect(await introspect()).toEqual(['orders']);

    // The change is tested first: a mode the server refuses is not saved without the choice.
    const refused = await cp.request('PATCH', `/v1/connections/${id}`, {
      token,
      body: { tlsMode: 'disable' },
    });
    expect(refused.status).toBe(422);
    expect(refused.body).toMatchObject({
      error: 'connection_test_failed',
      test: { ok: false, failedCheck: expect.any(String) },
    });
    expect(await introspect()).toEqual(['orders']);
    const patched = await cp.request('PATCH', `/v1/connections/${id}`, {
      token,
      body: { tlsMode: 'disable', skipTest: true },
    });
    expect(patched.status).toBe(200);
    await expect(introspect()).rejects.toMatchObject({ code: 'source_unavailable' });
  });

  it('a saved connection: its test and schema use the stored tlsMode', async () => {
    const created = await cp.request('POST', '/v1/connections', {
      token,
      body: {
        name: `saved tls ${engine}`,
        backend,
        host: '127.0.0.1',
        port: server.port,
        user: tlsUser().user,
        password: tlsUser().password,
        tlsMode: 'require',
      },
    });
    const id = (created.body as { id: string }).id;
    const loginDatabase = engine === 'postgres' ? { database: db.name } : {};
    const test = async () =>
      (await cp.request('POST', `/v1/connections/${id}/test`, { token, body: loginDatabase }))
        .body as { ok: boolean; error?: string; availableSchemas?: string[] };
    const schema = () =>
      cp.request('GET', `/v1/connections/${id}/schema?sourceSchema=${db.name}`, { token });
    expect(await test()).toMatchObject({
      ok: true,
      availableSchemas: expect.arrayContaining([db.name]),
    });
    const read = await schema();
    expect(read.status).toBe(200);
    expect(read.body.tables.map((table: { name: string }) => table.name)).toEqual(['orders']);

    for (const [tlsMode, failure] of [
      ['verify-full', /^The source server's TLS certificate is not trusted/],
      ['disable', /./],
    ] as const) {
      await cp.request('PATCH', `/v1/connections/${id}`, {
        token,
        body: { tlsMode, skipTest: true },
      });
      const answer = await test();
      expect(answer.ok, tlsMode).toBe(false);
      expect(answer.error).toMatch(failure);
      const refused = await schema();
      expect(refused.status, tlsMode).toBe(502);
      expect(refused.body).toEqual({ error: 'source_unavailable', message: answer.error });
      expect(JSON.stringify([answer, refused.body])).not.toContain(tlsUser().password);
    }
  });
});
