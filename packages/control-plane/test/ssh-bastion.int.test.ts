import { existsSync, readFileSync } from 'node:fs';
import { testMariaDb } from '@replix/testkit/vitest';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { startThrowawaySshd, type ThrowawaySshd } from '../../sources/test/throwaway-sshd.ts';
import { startTestControlPlane, type TestControlPlane } from './control-plane-harness.ts';
import { pollUntil, provisionThroughApi } from './lifecycle-fixtures.ts';

const SHOP = `
  CREATE TABLE customers (id INT PRIMARY KEY, name VARCHAR(50) NOT NULL);
  INSERT INTO customers VALUES (1, 'Ada'), (2, 'Grace');
`;

/**
 * A connection whose source is reached through a real OpenSSH bastion: test-connection, the
 * schema, the build and the running instance (snapshot and binlog replication) all go through
 * the tunnel, and stop working when the bastion goes away.
 */
describe('a source behind an SSH bastion', () => {
  let sshd: ThrowawaySshd;
  let cp: TestControlPlane;
  let token: string;
  let source: { host: string; port: number; user: string; schema: string };
  let cleanup: () => Promise<void> = async () => {};

  beforeAll(async () => {
    sshd = await startThrowawaySshd();
    const admin = testMariaDb();
    const database = await admin.createDatabase(SHOP);
    const user = `rs_${database.name.slice(-8)}`;
    await admin.exec(
      `CREATE USER '${user}'@'%' IDENTIFIED BY 'tunnel-pw'; GRANT SELECT, REPLICATION SLAVE, REPLICATION CLIENT ON *.* TO '${user}'@'%'`,
    );
    // The source's address as the bastion sees it (here the same machine's loopback).
    const url = new URL(admin.serverUrl);
    source = { host: url.hostname, port: Number(url.port), user, schema: database.name };
    cleanup = async () => {
      await database.drop();
      await admin.exec(`DROP USER IF EXISTS '${user}'@'%'`);
    };
    cp = await startTestControlPlane('pglite', {
      roles: ['api', 'reconciler', 'builder', 'health-monitor'],
    });
    token = await cp.token('bastion@example.com');
  }, 120_000);
  afterAll(async () => {
    await cp?.close();
    await sshd?.stop();
    await cleanup();
  });

  const ssh = () => ({
    host: sshd.host,
    port: sshd.port,
    user: sshd.user,
    privateKey: sshd.privateKey,
  });

  it('tests, introspects, builds, serves and replicates through the tunnel', {
    timeout: 600_000,
  }, async () => {
    const testConnection = (fields: Record<string, unknown>) =>
      cp.request('POST', '/v1/connections/test-connection', {
        token,
        body: {
          mysqlHost: source.host,
          mysqlPort: source.port,
          mysqlUser: source.user,
          mysqlPassword: 'tunnel-pw',
          ...fields,
        },
      });
    const tested = await testConnection({ tlsMode: 'disable', ssh: ssh() });
    expect(tested.status).toBe(200);
    expect(tested.body).toMatchObject({ ok: true, binlog: { ready: true } });
    expect(tested.body.availableSchemas).toContain(source.schema);

    const refusedKey = await testConnection({ ssh: { ...ssh(), privateKey: sshd.strangerKey } });
    expect(refusedKey.body.ok).toBe(false);
    expect(refusedKey.body.error).toMatch(/SSH/);

    const connection = await cp.request('POST', '/v1/connections', {
      token,
      body: {
        name: 'behind-bastion',
        host: source.host,
        port: source.port,
        user: source.user,
        password: 'tunnel-pw',
        tlsMode: 'disable',
        ssh: ssh(),
      },
    });
    expect(connection.status).toBe(201);
    expect(connection.body.ssh).toEqual({
      host: sshd.host,
      port: sshd.port,
      user: sshd.user,
      hasPrivateKey: true,
    });
    expect(JSON.stringify(connection.body)).not.toContain('PRIVATE KEY');

    const { databaseId, running } = await provisionThroughApi(
      cp,
      token,
      {
        name: 'tunnelled',
        connectionId: connection.body.id,
        sourceSchema: source.schema,
        tables: ['customers'],
      },
      240_000,
    );

    const key = await cp.request('POST', `/v1/databases/${databaseId}/api-keys`, {
      token,
      body: { name: 'app' },
    });
    const query = () =>
      fetch(`${running.instance.endpointUrl}/query`, {
        method: 'POST',
        headers: { authorization: `Bearer ${key.body.key}` },
        body: 'customers { id name } ORDER BY id',
      });
    const answered = await pollUntil(query, (r) => r.status === 200, 10_000, 'the key to work');
    const rows = (await answered.json()) as { data: Array<{ id: number; name: string }> };
    expect(rows.data).toEqual([
      { id: 1, name: 'Ada' },
      { id: 2, name: 'Grace' },
    ]);

    // The instance process was launched to open the tunnel itself (spec'd launch environment).
    const instance = await cp.context.db
      .selectFrom('instances')
      .select('pid')
      .where('database_id', '=', databaseId)
      .where('removed_at', 'is', null)
      .executeTakeFirstOrThrow();
    expect(instance.pid).toBeGreaterThan(0);
    if (existsSync(`/proc/${instance.pid}/environ`)) {
      const environ = readFileSync(`/proc/${instance.pid}/environ`, 'utf8').split('\0');
      expect(environ).toContain(`REPLIX_SSH_PORT=${sshd.port}`);
      expect(environ).toContain(`REPLIX_SSH_HOST=${sshd.host}`);
    }

    // Replication (the binlog stream) also runs through the tunnel.
    await testMariaDb().exec(`INSERT INTO \`${source.schema}\`.customers VALUES (3, 'Linus')`);
    await pollUntil(
      async () => ((await (await query()).json()) as { data: unknown[] }).data.length,
      (n) => n === 3,
      30_000,
      'the new row to replicate',
    );

    // Without the bastion, the source is out of reach: the tunnel was the only way in.
    await sshd.stop();
    const unreachable = await cp.request('GET', `/v1/databases/${databaseId}/schema`, { token });
    expect(unreachable.status).toBe(502);
    expect(unreachable.body.error).toBe('source_unavailable');
    expect(unreachable.body.message).not.toContain(source.host);
    expect(unreachable.body.message).not.toContain(String(sshd.port));

    expect(
      (await cp.request('POST', `/v1/databases/${databaseId}/terminate`, { token })).status,
    ).toBe(202);
    await pollUntil(
      async () =>
        (await cp.request('GET', `/v1/databases/${databaseId}/instance`, { token })).body.database
          .status,
      (s) => s === 'terminated',
      60_000,
      'the database to terminate',
    );
  });
});
