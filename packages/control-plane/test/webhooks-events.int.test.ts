import { testMariaDb } from '@replix/testkit/vitest';
import { afterAll, beforeAll, describe, expect, it, vi } from 'vitest';
import {
  POSTGRES_STORE,
  startTestControlPlane,
  type TestControlPlane,
} from './control-plane-harness.ts';
import {
  type Caller,
  caller,
  insertConnection,
  insertDatabase,
  sourceFromUrl,
} from './lifecycle-fixtures.ts';
import {
  eventually,
  killInstanceProcesses,
  requestAction,
  statusReached,
} from './reconciler-fixtures.ts';
import { type ReceivedWebhook, signatureValid, TestReceiver } from './webhook-test-receiver.ts';

// Builds and deploys take seconds each; a slow machine gets room.
vi.setConfig({ testTimeout: 120_000 });

const ALL_TYPES = ['build.completed', 'build.failed', 'instance.unhealthy', 'instance.recovered'];

describe.each(POSTGRES_STORE)('the four platform events as webhooks on the %s store', (kind) => {
  let cp: TestControlPlane;
  let receiver: TestReceiver;
  let source: Awaited<ReturnType<ReturnType<typeof testMariaDb>['createDatabase']>>;
  let owner: Caller;
  let connectionId: string;

  beforeAll(async () => {
    receiver = await TestReceiver.start();
    source = await testMariaDb().createDatabase(
      "CREATE TABLE item (id INT PRIMARY KEY, name VARCHAR(20)); INSERT INTO item VALUES (1, 'one')",
    );
    cp = await startTestControlPlane(kind, {
      roles: ['api', 'reconciler', 'builder', 'health-monitor'],
      env: {
        REPLIX_WEBHOOKS_ALLOW_LOCAL: '1',
        REPLIX_WEBHOOKS_CA_FILE: receiver.caFile,
        REPLIX_WEBHOOK_POLL_MS: '100',
      },
    });
    owner = await caller(cp, `events-${kind}@example.com`, 'business');
    connectionId = await insertConnection(cp, owner, sourceFromUrl(source.url));
  });
  afterAll(async () => {
    const dataDir = cp?.dataDir;
    await cp?.close();
    if (dataDir) killInstanceProcesses(dataDir);
    await receiver?.close();
    await source?.drop();
  });

  /** A draft database subscribed (through the API) to all four events at its own path. */
  async function subscribedDatabase(name: string, schemaConfig: Record<string, unknown> = {}) {
    const { id } = await insertDatabase(cp, owner, {
      connectionId,
      name,
      sourceSchema: source.name,
      schemaConfig,
      syncMode: 'poll',
      syncInterval: 1,
    });
    const created = await cp.request('POST', `/v1/databases/${id}/webhooks`, {
      token: owner.token,
      body: { url: receiver.url(`/${name}`), eventTypes: ALL_TYPES },
    });
    expect(created.status).toBe(201);
    return { id, secret: created.body.secret as string };
  }

  const arrived = (name: string, type: string): Promise<ReceivedWebhook> =>
    eventually(
      async () =>
        receiver.received.find(
          (r) => r.path === `/${name}` && r.headers['x-service-event'] === type,
        ),
      90_000,
      `${type} at /${name}`,
    );

  it('delivers build.completed when a provision runs, then instance.unhealthy and instance.recovered', async () => {
    const { id, secret } = await subscribedDatabase('good');
    await requestAction(cp.context.db, id, 'provision', 'building');
    const completed = await arrived('good', 'build.completed');
    expect(signatureValid(secret, completed)).toBe(true);
    const row = await statusReached(cp.context.db, id, 'running');
    const instance = await cp.context.db
      .selectFrom('instances')
      .select('endpoint_url')
      .where('database_id', '=', id)
      .where('removed_at', 'is', null)
      .executeTakeFirstOrThrow();
    expect(completed.body).toEqual({
      databaseId: id,
      databaseName: row.name,
      endpointUrl: instance.endpoint_url,
      timestamp: expect.stringMatching(/^\d{4}-\d\d-\d\dT\d\d:\d\d:\d\d\.\d{3}Z$/),
    });

    // Health: the first reading (ok) says nothing; losing the source table makes the instance
    // degraded, getting it back makes it healthy again.
    await eventually(async () => {
      const health = await cp.context.db
        .selectFrom('instances')
        .select('health_status')
        .where('database_id', '=', id)
        .where('removed_at', 'is', null)
        .executeTakeFirst();
      return health?.health_status === 'ok';
    });
    await source.exec('RENAME TABLE item TO item_away');
    let unhealthy: ReceivedWebhook;
    try {
      unhealthy = await arrived('good', 'instance.unhealthy');
    } finally {
      await source.exec('RENAME TABLE item_away TO item');
    }
    expect(unhealthy.body).toEqual({
      databaseId: id,
      databaseName: row.name,
      healthStatus: 'degraded',
      timestamp: expect.any(String),
    });
    const recovered = await arrived('good', 'instance.recovered');
    expect(recovered.body).toEqual({
      databaseId: id,
      databaseName: row.name,
      timestamp: expect.any(String),
    });
    for (const request of [unhealthy, recovered])
      expect(signatureValid(secret, request)).toBe(true);
    // Each event once, no build.failed.
    const types = receiver.received
      .filter((r) => r.path === '/good')
      .map((r) => r.headers['x-service-event']);
    expect(types).toEqual(['build.completed', 'instance.unhealthy', 'instance.recovered']);
  });

  it('delivers build.failed when the build of a provision fails', async () => {
    const { id, secret } = await subscribedDatabase('bad', { tabels: [] });
    await requestAction(cp.context.db, id, 'provision', 'building');
    const failed = await arrived('bad', 'build.failed');
    expect(signatureValid(secret, failed)).toBe(true);
    const row = await statusReached(cp.context.db, id, 'failed');
    expect(failed.body).toEqual({
      databaseId: id,
      databaseName: row.name,
      error: 'Invalid schema config: tabels: unknown key',
      timestamp: expect.any(String),
    });
    const types = receiver.received
      .filter((r) => r.path === '/bad')
      .map((r) => r.headers['x-service-event']);
    expect(types).toEqual(['build.failed']);
  });
});
