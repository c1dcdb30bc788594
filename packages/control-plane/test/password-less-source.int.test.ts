import type { TestDatabase } from '@replix/testkit';
import { testMariaDb } from '@replix/testkit/vitest';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { startTestControlPlane, type TestControlPlane } from './control-plane-harness.ts';
import { pollUntil, provisionThroughApi } from './lifecycle-fixtures.ts';

// Issue 15: a MariaDB user created without a password works end to end: saved through the
// API without one (tested on save), built, deployed, queried, and its changes followed (CDC).

const USER = 'rx_nopass_e2e';

describe('a source user without a password, end to end', () => {
  let cp: TestControlPlane;
  let source: TestDatabase;
  let token: string;

  beforeAll(async () => {
    source = await testMariaDb().createDatabase(`
      CREATE TABLE customers (id INT PRIMARY KEY, name VARCHAR(50) NOT NULL);
      INSERT INTO customers VALUES (1, 'Ada'), (2, 'Grace');`);
    await testMariaDb().exec(
      `DROP USER IF EXISTS '${USER}'@'%'; CREATE USER '${USER}'@'%'; GRANT SELECT, REPLICATION SLAVE, REPLICATION CLIENT ON *.* TO '${USER}'@'%'`,
    );
    cp = await startTestControlPlane('pglite', {
      roles: ['api', 'reconciler', 'builder', 'health-monitor'],
    });
    token = await cp.token('no-password@example.com');
  }, 120_000);
  afterAll(async () => {
    await cp?.close();
    await source?.drop();
    await testMariaDb().exec(`DROP USER IF EXISTS '${USER}'@'%'`);
  });

  it('saves, provisions, answers queries and follows changes', { timeout: 300_000 }, async () => {
    const url = new URL(source.url);
    const connection = await cp.request('POST', '/v1/connections', {
      token,
      body: { name: 'no password', host: url.hostname, port: Number(url.port), user: USER },
    });
    expect(connection.status).toBe(201);
    expect(connection.body).toMatchObject({
      hasPassword: false,
      lastTest: { ok: true, binlog: { ready: true } },
    });

    const { databaseId, running } = await provisionThroughApi(cp, token, {
      name: 'customers',
      connectionId: connection.body.id,
      sourceSchema: source.name,
      tables: ['customers'],
    });
    expect(running.database.syncMode).toBe('cdc');
    const key = await cp.request('POST', `/v1/databases/${databaseId}/api-keys`, {
      token,
      body: { name: 'app' },
    });
    const names = async () => {
      const response = await fetch(`${running.instance.endpointUrl}/query`, {
        method: 'POST',
        headers: { authorization: `Bearer ${key.body.key}` },
        body: 'customers { name } ORDER BY id',
      });
      if (response.status !== 200) return [];
      return ((await response.json()) as { data: { name: string }[] }).data.map((r) => r.name);
    };
    expect(await pollUntil(names, (n) => n.length > 0, 10_000, 'the key to work')).toEqual([
      'Ada',
      'Grace',
    ]);

    await source.exec(`INSERT INTO customers VALUES (3, 'Linus')`);
    expect(
      await pollUntil(names, (n) => n.includes('Linus'), 30_000, 'the change to arrive'),
    ).toEqual(['Ada', 'Grace', 'Linus']);
  });
});
