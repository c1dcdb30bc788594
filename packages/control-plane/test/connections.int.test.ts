import { execFileSync } from 'node:child_process';
import { mkdtempSync, readFileSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import type { TestDatabase } from '@replix/testkit';
import { testMariaDb, testPostgres } from '@replix/testkit/vitest';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { startThrowawaySshd, type ThrowawaySshd } from '../../sources/test/throwaway-sshd.ts';
import {
  EMBEDDED_STORE,
  startTestControlPlane,
  type TestControlPlane,
} from './control-plane-harness.ts';
import { setPlan } from './lifecycle-fixtures.ts';

const PASSWORD = 'Pa$$w0rd:/@?#-secret';

/** An unencrypted OpenSSH key pair made by ssh-keygen. */
function keyPair(): { privateKey: string; publicKey: string } {
  const dir = mkdtempSync(join(tmpdir(), 'replix-key-'));
  try {
    execFileSync('ssh-keygen', ['-q', '-t', 'ed25519', '-N', '', '-f', join(dir, 'key')]);
    return {
      privateKey: readFileSync(join(dir, 'key'), 'utf8'),
      publicKey: readFileSync(join(dir, 'key.pub'), 'utf8'),
    };
  } finally {
    rmSync(dir, { recursive: true, force: true });
  }
}

describe.each(EMBEDDED_STORE)('connections on the %s store', (kind) => {
  let cp: TestControlPlane;
  let sshd: ThrowawaySshd;
  let mariaDb: TestDatabase;
  let postgres: TestDatabase;
  let mariaUrl: URL;
  let postgresUrl: URL;
  const mariaUser = `rx_conn_${kind}`;
  const { privateKey: sshKey, publicKey: sshPublicKey } = keyPair();
  /** Every response body, to prove no secret is ever in one. */
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
  const mysqlBody = () => ({
    name: 'shop',
    host: mariaUrl.hostname,
    port: Number(mariaUrl.port),
    user: mariaUser,
    password: PASSWORD,
  });

  beforeAll(async () => {
    cp = await startTestControlPlane(kind);
    sshd = await startThrowawaySshd();
    mariaDb = await testMariaDb().createDatabase('CREATE TABLE t (id INT PRIMARY KEY)');
    mariaUrl = new URL(mariaDb.url);
    await testMariaDb().exec(
      `DROP USER IF EXISTS '${mariaUser}'@'%'; CREATE USER '${mariaUser}'@'%' IDENTIFIED BY '${PASSWORD}'; GRANT SELECT, REPLICATION SLAVE, REPLICATION CLIENT ON *.* TO '${mariaUser}'@'%'`,
    );
    postgres = await testPostgres().createDatabase('CREATE TABLE t (id int PRIMARY KEY)');
    postgresUrl = new URL(postgres.url);
  });
  afterAll(async () => {
    await cp?.close();
    await sshd?.stop();
    await mariaDb?.drop();
    await postgres?.drop();
    await testMariaDb().exec(`DROP USER IF EXISTS '${mariaUser}'@'%'`);
  });

  it('answers 401 without a token on every route', async () => {
    const id = '00000000-0000-4000-8000-000000000000';
    for (const [method, path] of [
      ['GET', '/v1/connections'],
      ['POST', '/v1/connections'],
      ['GET', `/v1/connections/${id}`],
      ['PATCH', `/v1/connections/${id}`],
      ['DELETE', `/v1/connections/${id}`],
      ['POST', '/v1/connections/test-connection'],
    ] as const) {
      const response = await call(method, path, { body: method === 'GET' ? undefined : {} });
      expect(response.status, `${method} ${path}`).toBe(401);
      expect(response.body.error).toBe('unauthorized');
    }
  });

  it('creates a connection with defaults, secrets sealed and never returned', async () => {
    const token = await cp.token('create@example.com');
    const created = await call('POST', '/v1/connections', { token, body: mysqlBody() });
    expect(created.status).toBe(201);
    expect(created.body).toEqual({
      id: expect.any(String),
      name: 'shop',
      backend: 'mysql',
      host: mariaUrl.hostname,
      port: Number(mariaUrl.port),
      user: mariaUser,
      hasPassword: true,
      defaultRegion: 'eu-west-1',
      tlsMode: 'prefer',
      ssh: null,
      lastTest: {
        ok: true,
        testedAt: expect.any(String),
        latencyMs: expect.any(Number),
        binlog: { logBin: true, format: 'ROW', serverId: 1, ready: true, issues: [] },
      },
      createdAt: expect.any(String),
      updatedAt: expect.any(String),
    });
    const row = await cp.context.db
      .selectFrom('connections')
      .selectAll()
      .where('id', '=', created.body.id)
      .executeTakeFirstOrThrow();
    expect(row.password_enc).not.toContain(PASSWORD);
    expect(cp.context.secrets.open(row.password_enc as string)).toBe(PASSWORD);

    const defaults = await call('POST', '/v1/connections', {
      token,
      body: {
        name: 'pg',
        backend: 'postgres',
        host: 'db.example.com',
        user: 'u',
        password: 'p',
        skipTest: true,
      },
    });
    expect(defaults.body).toMatchObject({ backend: 'postgres', port: 5432, lastTest: null });
    const mssql = await call('POST', '/v1/connections', {
      token,
      body: {
        name: 'ms',
        backend: 'mssql',
        host: 'db.example.com',
        user: 'u',
        password: 'p',
        skipTest: true,
      },
    });
    expect(mssql.body).toMatchObject({ backend: 'mssql', port: 1433 });

    const list = await call('GET', '/v1/connections', { token });
    expect(list.status).toBe(200);
    expect(list.body.map((c: { name: string }) => c.name)).toEqual(['shop', 'pg', 'ms']);
    const one = await call('GET', `/v1/connections/${created.body.id}`, { token });
    expect(one.body).toEqual(created.body);

    const events = await cp.context.db
      .selectFrom('audit_events')
      .select(['event_type', 'entity_id', 'payload'])
      .where('entity_id', '=', created.body.id)
      .execute();
    expect(events).toEqual([
      {
        event_type: 'connection.created',
        entity_id: created.body.id,
        payload: { name: 'shop', backend: 'mysql', ssh: false, tested: true },
      },
    ]);
  });

  it('rejects bad fields with validation_failed naming the field', async () => {
    const token = await cp.token('invalid@example.com');
    const cases: [Record<string, unknown>, string][] = [
      [{ ...mysqlBody(), host: undefined }, 'body.host'],
      [{ ...mysqlBody(), host: 'a/b' }, 'body.host'],
      [{ ...mysqlBody(), port: 70_000 }, 'body.port'],
      [{ ...mysqlBody(), backend: 'oracle' }, 'body.backend'],
      [{ ...mysqlBody(), tlsMode: 'sometimes' }, 'body.tlsMode'],
      [{ ...mysqlBody(), defaultRegion: 'mars-1' }, 'body.defaultRegion'],
      [{ ...mysqlBody(), password: 'p'.repeat(1025) }, 'body.password'],
      [{ ...mysqlBody(), skipTest: 'yes' }, 'body.skipTest'],
      [{ ...mysqlBody(), ssh: { host: 'bastion', user: 'x' } }, 'body.ssh.privateKey'],
      [
        { ...mysqlBody(), ssh: { host: 'bastion', user: 'x', privateKey: 'nope' } },
        'body.ssh.privateKey',
      ],
      [{ ...mysqlBody(), surprise: 1 }, 'surprise'],
    ];
    for (const [body, field] of cases) {
      const response = await call('POST', '/v1/connections', { token, body });
      expect(response.status, field).toBe(400);
      expect(response.body.error).toBe('validation_failed');
      expect(response.body.message).toContain(field);
    }
  });

  it('needs a multi-region plan for a non-default region', async () => {
    const email = 'regions@example.com';
    const token = await cp.token(email);
    const body = { ...mysqlBody(), defaultRegion: 'us-east-1' };
    const refused = await call('POST', '/v1/connections', { token, body });
    expect(refused.status).toBe(403);
    expect(refused.body).toEqual({
      error: 'plan_limit',
      message: expect.stringContaining('us-east-1'),
    });
    const existing = await call('POST', '/v1/connections', { token, body: mysqlBody() });
    const patched = await call('PATCH', `/v1/connections/${existing.body.id}`, {
      token,
      body: { defaultRegion: 'us-east-1' },
    });
    expect(patched.status).toBe(403);
    await setPlan(cp, email, 'teams');
    const allowed = await call('POST', '/v1/connections', { token, body });
    expect(allowed.status).toBe(201);
    expect(allowed.body.defaultRegion).toBe('us-east-1');
  });

  it('keeps an SSH key sealed, reports only that it is there, and edits or removes it', async () => {
    const token = await cp.token('ssh@example.com');
    const created = await call('POST', '/v1/connections', {
      token,
      body: {
        ...mysqlBody(),
        ssh: { host: 'bastion.example.com', user: 'tunnel', privateKey: sshKey },
        skipTest: true,
      },
    });
    expect(created.status).toBe(201);
    expect(created.body.ssh).toEqual({
      host: 'bastion.example.com',
      port: 22,
      user: 'tunnel',
      hasPrivateKey: true,
    });
    const row = await cp.context.db
      .selectFrom('connections')
      .selectAll()
      .where('id', '=', created.body.id)
      .executeTakeFirstOrThrow();
    expect(cp.context.secrets.open(row.ssh_private_key_enc as string)).toBe(sshKey);

    // New host, same key.
    const moved = await call('PATCH', `/v1/connections/${created.body.id}`, {
      token,
      body: { ssh: { host: 'bastion2.example.com', port: 2222, user: 'tunnel' }, skipTest: true },
    });
    expect(moved.status).toBe(200);
    expect(moved.body.ssh).toEqual({
      host: 'bastion2.example.com',
      port: 2222,
      user: 'tunnel',
      hasPrivateKey: true,
    });
    const removed = await call('PATCH', `/v1/connections/${created.body.id}`, {
      token,
      body: { ssh: null },
    });
    expect(removed.body.ssh).toBeNull();
    const keyless = await call('PATCH', `/v1/connections/${created.body.id}`, {
      token,
      body: { ssh: { host: 'bastion.example.com', user: 'tunnel' } },
    });
    expect(keyless.status).toBe(400);
    expect(keyless.body.message).toContain('body.ssh.privateKey');
    const publicKey = await call('PATCH', `/v1/connections/${created.body.id}`, {
      token,
      body: {
        ssh: {
          host: 'bastion.example.com',
          user: 'tunnel',
          privateKey: sshPublicKey,
        },
      },
    });
    expect(publicKey.status).toBe(400);
    expect(publicKey.body.message).toContain('public key');
  });

  it('patches fields, seals a new password and audits the changed field names', async () => {
    const token = await cp.token('patch@example.com');
    const created = await call('POST', '/v1/connections', { token, body: mysqlBody() });
    const patched = await call('PATCH', `/v1/connections/${created.body.id}`, {
      token,
      body: { name: 'renamed', password: 'another-Secret-1', tlsMode: 'require', skipTest: true },
    });
    expect(patched.status).toBe(200);
    // Saved untested: the last test was of the old settings, so there is none now.
    expect(patched.body).toMatchObject({
      name: 'renamed',
      tlsMode: 'require',
      hasPassword: true,
      lastTest: null,
    });
    expect(patched.body.updatedAt >= created.body.updatedAt).toBe(true);
    const row = await cp.context.db
      .selectFrom('connections')
      .select('password_enc')
      .where('id', '=', created.body.id)
      .executeTakeFirstOrThrow();
    expect(cp.context.secrets.open(row.password_enc as string)).toBe('another-Secret-1');
    const event = await cp.context.db
      .selectFrom('audit_events')
      .select(['payload'])
      .where('entity_id', '=', created.body.id)
      .where('event_type', '=', 'connection.updated')
      .executeTakeFirstOrThrow();
    expect(event.payload).toEqual({ changed: ['name', 'password', 'tlsMode'] });
    expect(JSON.stringify(event.payload)).not.toContain('another-Secret-1');
    const backend = await call('PATCH', `/v1/connections/${created.body.id}`, {
      token,
      body: { backend: 'postgres' },
    });
    expect(backend.status).toBe(400);
    expect(backend.body.message).toContain('backend');
  });

  it("reports another account's connection as not found", async () => {
    const owner = await cp.token('owner@example.com');
    const other = await cp.token('other@example.com');
    const created = await call('POST', '/v1/connections', { token: owner, body: mysqlBody() });
    for (const method of ['GET', 'PATCH', 'DELETE']) {
      const response = await call(method, `/v1/connections/${created.body.id}`, {
        token: other,
        body: method === 'PATCH' ? { name: 'mine now' } : undefined,
      });
      expect(response.status, method).toBe(404);
      expect(response.body).toEqual({ error: 'not_found', message: 'Connection not found.' });
    }
    expect((await call('GET', '/v1/connections', { token: other })).body).toEqual([]);
  });

  it('deletes softly, and only once no database uses the connection', async () => {
    const token = await cp.token('delete@example.com');
    const created = await call('POST', '/v1/connections', { token, body: mysqlBody() });
    const database = await call('POST', '/v1/databases', {
      token,
      body: { name: 'uses it', connectionId: created.body.id, sourceSchema: mariaDb.name },
    });
    expect(database.status).toBe(201);
    const busy = await call('DELETE', `/v1/connections/${created.body.id}`, { token });
    expect(busy.status).toBe(409);
    expect(busy.body.error).toBe('conflict');
    expect(busy.body.message).toContain('uses it');
    await cp.context.db
      .updateTable('databases')
      .set({ deleted_at: new Date() })
      .where('id', '=', database.body.id)
      .execute();
    const deleted = await call('DELETE', `/v1/connections/${created.body.id}`, { token });
    expect(deleted.status).toBe(204);
    expect((await call('GET', `/v1/connections/${created.body.id}`, { token })).status).toBe(404);
    expect((await call('DELETE', `/v1/connections/${created.body.id}`, { token })).status).toBe(
      404,
    );
    const row = await cp.context.db
      .selectFrom('connections')
      .select('deleted_at')
      .where('id', '=', created.body.id)
      .executeTakeFirstOrThrow();
    expect(row.deleted_at).toBeInstanceOf(Date);
    const events = await cp.context.db
      .selectFrom('audit_events')
      .select('event_type')
      .where('entity_id', '=', created.body.id)
      .orderBy('created_at')
      .execute();
    expect(events.map((e) => e.event_type)).toEqual(['connection.created', 'connection.deleted']);
  });

  describe('tested on save', () => {
    const noPasswordUser = `rx_nopass_${kind}`;
    beforeAll(async () => {
      await testMariaDb().exec(
        `DROP USER IF EXISTS '${noPasswordUser}'@'%'; CREATE USER '${noPasswordUser}'@'%'; GRANT SELECT, REPLICATION SLAVE, REPLICATION CLIENT ON *.* TO '${noPasswordUser}'@'%'`,
      );
    });
    afterAll(async () => {
      await testMariaDb().exec(`DROP USER IF EXISTS '${noPasswordUser}'@'%'`);
    });
    const connectionCount = async (token: string) =>
      (await call('GET', '/v1/connections', { token })).body.length;

    it('refuses a failing connection with 422 and the test result, saving nothing', async () => {
      const token = await cp.token('tested-fail@example.com');
      const wrong = await call('POST', '/v1/connections', {
        token,
        body: { ...mysqlBody(), password: 'not-the-Password' },
      });
      expect(wrong.status).toBe(422);
      expect(wrong.body).toEqual({
        error: 'connection_test_failed',
        message:
          'The connection test failed (login): Authentication to the source database failed. Fix the settings, or save it anyway with skipTest: true.',
        test: {
          ok: false,
          error: 'Authentication to the source database failed.',
          failedCheck: 'login',
        },
      });
      const down = await call('POST', '/v1/connections', {
        token,
        body: { ...mysqlBody(), port: 1 },
      });
      expect(down.status).toBe(422);
      expect(down.body.test).toEqual({
        ok: false,
        error: 'Could not connect to the source database (ECONNREFUSED).',
        failedCheck: 'network',
      });
      for (const response of [wrong, down]) {
        const text = JSON.stringify(response.body);
        expect(text).not.toContain(mariaUrl.hostname);
        expect(text).not.toContain(mariaUser);
      }
      expect(await connectionCount(token)).toBe(0);
    });

    it('saves a failing connection on the explicit choice, untested until tested', async () => {
      const token = await cp.token('tested-anyway@example.com');
      const saved = await call('POST', '/v1/connections', {
        token,
        body: { ...mysqlBody(), password: 'not-the-Password', skipTest: true },
      });
      expect(saved.status).toBe(201);
      expect(saved.body.lastTest).toBeNull();
      const event = await cp.context.db
        .selectFrom('audit_events')
        .select('payload')
        .where('entity_id', '=', saved.body.id)
        .executeTakeFirstOrThrow();
      expect(event.payload).toMatchObject({ tested: false });
      // Testing the saved connection keeps the result on it.
      const tested = await call('POST', `/v1/connections/${saved.body.id}/test`, { token });
      expect(tested.body).toMatchObject({ ok: false, failedCheck: 'login' });
      const after = await call('GET', `/v1/connections/${saved.body.id}`, { token });
      expect(after.body.lastTest).toEqual({
        ok: false,
        error: 'Authentication to the source database failed.',
        failedCheck: 'login',
        testedAt: expect.any(String),
      });
      expect(after.body.updatedAt).toBe(saved.body.updatedAt);
      // A change of password is tested too: a wrong one changes nothing, the right one is kept.
      const stillWrong = await call('PATCH', `/v1/connections/${saved.body.id}`, {
        token,
        body: { password: 'still-not-it' },
      });
      expect(stillWrong.status).toBe(422);
      expect(stillWrong.body.test.failedCheck).toBe('login');
      const fixed = await call('PATCH', `/v1/connections/${saved.body.id}`, {
        token,
        body: { password: PASSWORD },
      });
      expect(fixed.status).toBe(200);
      expect(fixed.body.lastTest).toMatchObject({ ok: true, binlog: { ready: true } });
      // A rename does not reach the source, so it is not tested.
      const renamed = await call('PATCH', `/v1/connections/${saved.body.id}`, {
        token,
        body: { name: 'renamed' },
      });
      expect(renamed.body.lastTest).toEqual(fixed.body.lastTest);
    });

    it('saves a user without a password, omitted or empty, and tests it', async () => {
      const token = await cp.token('no-password@example.com');
      const { password: _, ...withoutPassword } = mysqlBody();
      for (const body of [
        { ...withoutPassword, user: noPasswordUser },
        { ...withoutPassword, user: noPasswordUser, password: '' },
      ]) {
        const created = await call('POST', '/v1/connections', { token, body });
        expect(created.status).toBe(201);
        expect(created.body).toMatchObject({
          user: noPasswordUser,
          hasPassword: false,
          lastTest: { ok: true, binlog: { ready: true } },
        });
        const row = await cp.context.db
          .selectFrom('connections')
          .select('password_enc')
          .where('id', '=', created.body.id)
          .executeTakeFirstOrThrow();
        expect(row.password_enc).toBeNull();
        const tested = await call('POST', `/v1/connections/${created.body.id}/test`, { token });
        expect(tested.body).toMatchObject({ ok: true, availableSchemas: expect.any(Array) });
      }
      // PostgreSQL with trust authentication (the harness server's loopback rule).
      const trusted = await call('POST', '/v1/connections', {
        token,
        body: {
          name: 'pg trust',
          backend: 'postgres',
          host: postgresUrl.hostname,
          port: Number(postgresUrl.port),
          user: 'postgres',
          tlsMode: 'disable',
        },
      });
      expect(trusted.status).toBe(201);
      expect(trusted.body).toMatchObject({
        hasPassword: false,
        lastTest: { ok: true, binlog: { format: 'logical' } },
      });
      // A user that needs one is refused without it.
      const missing = await call('POST', '/v1/connections', { token, body: withoutPassword });
      expect(missing.status).toBe(422);
      expect(missing.body.test.failedCheck).toBe('login');
      // A stored password can be removed (null or '').
      const created = await call('POST', '/v1/connections', { token, body: mysqlBody() });
      const cleared = await call('PATCH', `/v1/connections/${created.body.id}`, {
        token,
        body: { user: noPasswordUser, password: null },
      });
      expect(cleared.status).toBe(200);
      expect(cleared.body).toMatchObject({ hasPassword: false, lastTest: { ok: true } });
    });
  });

  describe('test-connection', () => {
    const mysqlTest = () => ({
      mysqlHost: mariaUrl.hostname,
      mysqlPort: Number(mariaUrl.port),
      mysqlUser: mariaUser,
      mysqlPassword: PASSWORD,
    });

    it('reports a ready MariaDB: latency, schemas, size and binlog', async () => {
      const token = await cp.token('test-mysql@example.com');
      const response = await call('POST', '/v1/connections/test-connection', {
        token,
        body: mysqlTest(),
      });
      expect(response.status).toBe(200);
      expect(response.body).toEqual({
        ok: true,
        latencyMs: expect.any(Number),
        estimatedSizeGb: expect.any(Number),
        availableSchemas: expect.arrayContaining([mariaDb.name]),
        binlog: { logBin: true, format: 'ROW', serverId: 1, ready: true, issues: [] },
      });
      for (const system of ['mysql', 'information_schema', 'performance_schema', 'sys']) {
        expect(response.body.availableSchemas).not.toContain(system);
      }
    });

    it('refuses an empty password by naming the ways to test a user without one', async () => {
      const token = await cp.token('test-empty-password@example.com');
      const response = await call('POST', '/v1/connections/test-connection', {
        token,
        body: { ...mysqlTest(), mysqlPassword: '' },
      });
      expect(response.status).toBe(400);
      expect(response.body.error).toBe('validation_failed');
      expect(response.body.message).toMatch(/^body\.mysqlPassword must not be empty/);
      expect(response.body.message).toContain('POST /v1/connections/{id}/test');
    });

    it("names another engine's port at once, for either backend", async () => {
      const token = await cp.token('test-wrong-engine@example.com');
      const mysqlAtPostgres = await call('POST', '/v1/connections/test-connection', {
        token,
        body: { ...mysqlTest(), mysqlPort: Number(postgresUrl.port) },
      });
      expect(mysqlAtPostgres.body).toEqual({
        ok: false,
        failedCheck: 'server',
        error:
          "The server at that port speaks PostgreSQL's protocol, not MySQL/MariaDB's: choose the postgres backend, or the port of the MySQL/MariaDB server (usually 3306).",
      });
      const postgresAtMaria = await call('POST', '/v1/connections/test-connection', {
        token,
        body: { ...mysqlTest(), backend: 'postgres' },
      });
      expect(postgresAtMaria.body).toMatchObject({
        ok: false,
        failedCheck: 'server',
        error: expect.stringContaining("speaks MySQL/MariaDB's protocol, not PostgreSQL's"),
      });
    });

    it('reports what a user without replication grants lacks', async () => {
      const token = await cp.token('test-grants@example.com');
      const user = `rx_nogrant_${kind}`;
      await testMariaDb().exec(
        `DROP USER IF EXISTS '${user}'@'%'; CREATE USER '${user}'@'%' IDENTIFIED BY 'pw-123'; GRANT SELECT ON \`${mariaDb.name}\`.* TO '${user}'@'%'`,
      );
      try {
        const response = await call('POST', '/v1/connections/test-connection', {
          token,
          body: { ...mysqlTest(), mysqlUser: user, mysqlPassword: 'pw-123' },
        });
        expect(response.body).toMatchObject({
          ok: true,
          availableSchemas: [mariaDb.name],
          binlog: { logBin: true, ready: false, issues: [expect.stringContaining('REPLICATION')] },
        });
      } finally {
        await testMariaDb().exec(`DROP USER IF EXISTS '${user}'@'%'`);
      }
    });

    it('reports a ready PostgreSQL: logical replication and connectable databases', async () => {
      const token = await cp.token('test-postgres@example.com');
      const response = await call('POST', '/v1/connections/test-connection', {
        token,
        body: {
          backend: 'postgres',
          mysqlHost: postgresUrl.hostname,
          mysqlPort: Number(postgresUrl.port),
          mysqlUser: 'postgres',
          mysqlPassword: 'unused-by-trust-auth',
          database: postgres.name,
        },
      });
      expect(response.status).toBe(200);
      expect(response.body).toEqual({
        ok: true,
        latencyMs: expect.any(Number),
        estimatedSizeGb: expect.any(Number),
        availableSchemas: expect.arrayContaining([postgres.name, 'postgres']),
        binlog: { logBin: true, format: 'logical', serverId: null, ready: true, issues: [] },
      });
      expect(response.body.availableSchemas).not.toContain('template0');
      expect(response.body.availableSchemas).not.toContain('template1');
    });

    it('answers ok:false, without internals, for a wrong password, user or port', async () => {
      const token = await cp.token('test-fail@example.com');
      const wrongPassword = await call('POST', '/v1/connections/test-connection', {
        token,
        body: { ...mysqlTest(), mysqlPassword: 'not-the-Password' },
      });
      expect(wrongPassword.status).toBe(200);
      expect(wrongPassword.body).toEqual({
        ok: false,
        error: 'Authentication to the source database failed.',
        failedCheck: 'login',
      });
      const noRole = await call('POST', '/v1/connections/test-connection', {
        token,
        body: {
          backend: 'postgres',
          mysqlHost: postgresUrl.hostname,
          mysqlPort: Number(postgresUrl.port),
          mysqlUser: 'no_such_role',
          mysqlPassword: 'x',
        },
      });
      expect(noRole.body).toEqual({
        ok: false,
        error: 'Authentication to the source database failed.',
        failedCheck: 'login',
      });
      const closedPort = await call('POST', '/v1/connections/test-connection', {
        token,
        body: { ...mysqlTest(), mysqlPort: 1 },
      });
      expect(closedPort.body).toEqual({
        ok: false,
        error: 'Could not connect to the source database (ECONNREFUSED).',
        failedCheck: 'network',
      });
      for (const response of [wrongPassword, noRole, closedPort]) {
        const text = JSON.stringify(response.body);
        expect(text).not.toContain(mariaUrl.hostname);
        expect(text).not.toContain(mariaUser);
        expect(text).not.toMatch(/at .*\.ts/);
      }
    });

    it('tests through an SSH tunnel, and reports a refused key as ok:false', async () => {
      const token = await cp.token('test-ssh@example.com');
      const ssh = {
        host: sshd.host,
        port: sshd.port,
        user: sshd.user,
        privateKey: sshd.privateKey,
      };
      const response = await call('POST', '/v1/connections/test-connection', {
        token,
        body: { ...mysqlTest(), ssh },
      });
      expect(response.body).toMatchObject({
        ok: true,
        availableSchemas: expect.arrayContaining([mariaDb.name]),
        binlog: { ready: true },
      });
      const refused = await call('POST', '/v1/connections/test-connection', {
        token,
        body: { ...mysqlTest(), ssh: { ...ssh, privateKey: sshd.strangerKey } },
      });
      expect(refused.body).toEqual({
        ok: false,
        error: 'The SSH server refused the tunnel user or private key.',
        failedCheck: 'ssh',
      });
    });

    it('rejects a bad body with 400 naming the field', async () => {
      const token = await cp.token('test-invalid@example.com');
      const cases: [Record<string, unknown>, string][] = [
        [{ ...mysqlTest(), mysqlHost: undefined }, 'body.mysqlHost'],
        [{ ...mysqlTest(), mysqlHost: '' }, 'body.mysqlHost'],
        [{ ...mysqlTest(), mysqlPort: 0 }, 'body.mysqlPort'],
        [{ ...mysqlTest(), mysqlPort: 65_536 }, 'body.mysqlPort'],
        [{ ...mysqlTest(), mysqlUser: '' }, 'body.mysqlUser'],
        [{ ...mysqlTest(), mysqlPassword: undefined }, 'body.mysqlPassword'],
        [{ ...mysqlTest(), backend: 'sqlite' }, 'body.backend'],
      ];
      for (const [body, field] of cases) {
        const response = await call('POST', '/v1/connections/test-connection', { token, body });
        expect(response.status, field).toBe(400);
        expect(response.body.error).toBe('validation_failed');
        expect(response.body.message).toContain(field);
      }
    });
  });

  it('never puts a password or private key in any response', () => {
    expect(bodies.length).toBeGreaterThan(30);
    for (const body of bodies) {
      for (const secret of [PASSWORD, 'another-Secret-1', 'not-the-Password', 'pw-123']) {
        expect(body).not.toContain(secret);
      }
      expect(body).not.toContain('PRIVATE KEY');
      expect(body).not.toContain(sshKey.split('\n')[1]);
    }
  });
});
