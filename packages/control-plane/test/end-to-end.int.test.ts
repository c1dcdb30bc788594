import { testMariaDb, testPostgres } from '@replix/testkit/vitest';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import {
  type StoreKind,
  startTestControlPlane,
  type TestControlPlane,
} from './control-plane-harness.ts';
import { pollUntil, provisionThroughApi, reachStatus } from './lifecycle-fixtures.ts';

const SHOP_MYSQL = `
  CREATE TABLE customers (id INT PRIMARY KEY, name VARCHAR(50) NOT NULL);
  CREATE TABLE orders (id INT PRIMARY KEY, customer_id INT NOT NULL, total DECIMAL(10,2),
    FOREIGN KEY (customer_id) REFERENCES customers(id));
  INSERT INTO customers VALUES (1, 'Ada'), (2, 'Grace'), (3, 'Linus');
  INSERT INTO orders VALUES (10, 1, 9.50), (11, 1, 20.00), (12, 2, 5.25);
`;
const SHOP_POSTGRES = SHOP_MYSQL.replace('DECIMAL(10,2)', 'NUMERIC(10,2)');

interface SourceCase {
  readonly source: 'mariadb' | 'postgres';
  readonly store: StoreKind;
  /** Makes the source database and returns the connection fields for it. */
  setup(): Promise<{
    backend: string;
    host: string;
    port: number;
    user: string;
    password: string;
    schema: string;
    drop(): Promise<void>;
  }>;
}

const CASES: SourceCase[] = [
  {
    source: 'mariadb',
    store: 'pglite',
    async setup() {
      const admin = testMariaDb();
      const database = await admin.createDatabase(SHOP_MYSQL);
      const user = `rx_${database.name.slice(-8)}`;
      await admin.exec(
        `CREATE USER '${user}'@'%' IDENTIFIED BY 's3cret-pw'; GRANT SELECT, REPLICATION SLAVE, REPLICATION CLIENT ON *.* TO '${user}'@'%'`,
      );
      const url = new URL(admin.serverUrl);
      return {
        backend: 'mysql',
        host: url.hostname,
        port: Number(url.port),
        user,
        password: 's3cret-pw',
        schema: database.name,
        async drop() {
          await database.drop();
          await admin.exec(`DROP USER IF EXISTS '${user}'@'%'`);
        },
      };
    },
  },
  {
    source: 'postgres',
    store: 'postgres',
    async setup() {
      const admin = testPostgres();
      const database = await admin.createDatabase(SHOP_POSTGRES);
      const url = new URL(admin.serverUrl);
      // The harness server trusts loopback connections; the raw connection test needs a password.
      return {
        backend: 'postgres',
        host: url.hostname,
        port: Number(url.port),
        user: 'postgres',
        password: 'unused-pw',
        schema: database.name,
        drop: () => database.drop(),
      };
    },
  },
];

describe.each(CASES)('end to end: $source source, $store store', (testCase) => {
  let cp: TestControlPlane;
  let source: Awaited<ReturnType<SourceCase['setup']>>;
  let token: string;

  beforeAll(async () => {
    source = await testCase.setup();
    cp = await startTestControlPlane(testCase.store, {
      roles: ['api', 'reconciler', 'builder', 'health-monitor'],
    });
    token = await cp.token(`e2e-${testCase.source}@example.com`);
  }, 120_000);
  afterAll(async () => {
    await cp?.close();
    await source?.drop();
  });

  const reach = (databaseId: string, wanted: string) => reachStatus(cp, token, databaseId, wanted);

  it('goes from a connection to queries, and back to nothing', { timeout: 600_000 }, async () => {
    const tested = await cp.request('POST', '/v1/connections/test-connection', {
      token,
      body: {
        backend: source.backend,
        mysqlHost: source.host,
        mysqlPort: source.port,
        mysqlUser: source.user,
        mysqlPassword: source.password,
      },
    });
    expect(tested.status).toBe(200);
    expect(tested.body).toMatchObject({ ok: true, binlog: { ready: true } });
    expect(tested.body.availableSchemas).toContain(source.schema);

    const connection = await cp.request('POST', '/v1/connections', {
      token,
      body: {
        name: 'shop',
        backend: source.backend,
        host: source.host,
        port: source.port,
        user: source.user,
        password: source.password,
      },
    });
    expect(connection.status).toBe(201);

    const { databaseId, running } = await provisionThroughApi(cp, token, {
      name: 'shop',
      connectionId: connection.body.id,
      sourceSchema: source.schema,
      tables: ['customers', 'orders'],
    });
    const endpointUrl: string = running.instance.endpointUrl;
    // The database record shows the same endpoint.
    const record = await cp.request('GET', `/v1/databases/${databaseId}`, { token });
    expect(record.body.endpointUrl).toBe(endpointUrl);

    const key = await cp.request('POST', `/v1/databases/${databaseId}/api-keys`, {
      token,
      body: { name: 'app' },
    });
    expect(key.status).toBe(201);
    const query = (apiKey: string) =>
      fetch(`${endpointUrl}/query`, {
        method: 'POST',
        headers: { authorization: `Bearer ${apiKey}` },
        body: 'customers { id name orders { total } } ORDER BY id',
      });
    // The new key reaches the instance within a second or two.
    const answered = await pollUntil(
      () => query(key.body.key),
      (r) => r.status === 200,
      5000,
      'the new key to work',
    );
    // The account's plan (free) gives the instance its key rate limit at launch.
    expect(answered.headers.get('ratelimit-policy')).toBe('"default";q=50;w=1');
    expect(answered.headers.get('ratelimit')).toMatch(/^"default";r=\d+;t=1$/);
    const rows = (await answered.json()) as { data: Array<{ id: number; orders: unknown[] }> };
    expect(rows.data.map((r) => r.id)).toEqual([1, 2, 3]);
    expect(rows.data[0]?.orders).toHaveLength(2);

    const deleted = await cp.request(
      'DELETE',
      `/v1/databases/${databaseId}/api-keys/${key.body.keyId}`,
      { token },
    );
    expect(deleted.status).toBe(204);
    const started = Date.now();
    await pollUntil(
      () => query(key.body.key),
      (r) => r.status === 401,
      5000,
      'the deleted key to stop working',
    );
    expect(Date.now() - started).toBeLessThan(5000);

    const paused = await cp.request('POST', `/v1/databases/${databaseId}/pause-replication`, {
      token,
    });
    expect(paused.body).toEqual({ replication_paused: true });

    const firstBuild: string = running.latestBuild.id;
    const redeploy = await cp.request('POST', `/v1/databases/${databaseId}/redeploy`, {
      token,
      body: { buildId: firstBuild },
    });
    expect(redeploy.status).toBe(202);
    expect(redeploy.body.status).toBe('deploying');
    const redeployed = await reach(databaseId, 'running');
    expect(redeployed.instance.buildId).toBe(firstBuild);
    expect(redeployed.instance.id).not.toBe(running.instance.id);
    // The database's endpoint outlives its instances.
    expect(redeployed.instance.endpointUrl).toBe(running.instance.endpointUrl);
    const builds = await cp.request('GET', `/v1/databases/${databaseId}/builds`, { token });
    expect(builds.body).toHaveLength(1);

    const terminate = await cp.request('POST', `/v1/databases/${databaseId}/terminate`, { token });
    expect(terminate.body.status).toBe('terminating');
    await reach(databaseId, 'terminated');
    const afterTerminate = await fetch(`${redeployed.instance.endpointUrl}/health`);
    expect(afterTerminate.status).toBe(503);
    expect(await afterTerminate.json()).toEqual({
      error: {
        code: 'service_unavailable',
        message: 'The database is terminated: provision it again to serve queries.',
      },
    });

    expect(
      (await cp.request('POST', `/v1/databases/${databaseId}/provision`, { token })).status,
    ).toBe(202);
    const provisionedAgain = await reach(databaseId, 'running');
    expect(provisionedAgain.instance.endpointUrl).toBe(running.instance.endpointUrl);

    const removed = await cp.request('DELETE', `/v1/databases/${databaseId}`, { token });
    expect(removed.status).toBe(202);
    await pollUntil(
      () => cp.request('GET', `/v1/databases/${databaseId}`, { token }),
      (r) => r.status === 404,
      60_000,
      'the database to be deleted',
    );
    const live = await cp.context.db
      .selectFrom('instances')
      .select('id')
      .where('database_id', '=', databaseId)
      .where('removed_at', 'is', null)
      .execute();
    expect(live).toEqual([]);

    const audit = await cp.request('GET', '/v1/account/audit-log?limit=100', { token });
    const types = audit.body.events.map((e: { eventType: string }) => e.eventType);
    for (const expected of [
      'connection.created',
      'database.created',
      'database.provision',
      'build.completed',
      'api_key.created',
      'api_key.deleted',
      'database.redeploy',
      'database.terminate',
    ]) {
      expect(types).toContain(expected);
    }
  });
});
