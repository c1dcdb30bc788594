import { randomUUID } from 'node:crypto';
import { parseSchemaConfig } from '@replix/engine';
import { type RunningInstance, resolveInstanceConfig, startInstance } from '@replix/instance';
import { deriveApiKey, newKeyId, newKeySecret } from '@replix/instance-protocol';
import { testMariaDb } from '@replix/testkit/vitest';
import pino from 'pino';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import {
  POSTGRES_STORE,
  startTestControlPlane,
  type TestControlPlane,
} from './control-plane-harness.ts';
import { caller, insertAccount, insertDatabase } from './lifecycle-fixtures.ts';
import { auditTypes, eventually } from './reconciler-fixtures.ts';

type Source = Awaited<ReturnType<ReturnType<typeof testMariaDb>['createDatabase']>>;

/** A real instance (what `replix serve` runs) with the given schema config, in this process. */
async function realInstance(source: Source, schemaConfig: Record<string, unknown>) {
  const keySecret = newKeySecret();
  const controlKeyId = newKeyId();
  const config = resolveInstanceConfig(
    { source: source.url, port: 0 },
    // The control key is an admin key: /health/detail needs that scope.
    { REPLIX_KEY_SECRET: keySecret.toString('hex'), REPLIX_ADMIN_KEY_IDS: controlKeyId },
  );
  const instance = await startInstance(
    { ...config, schemaConfig: parseSchemaConfig(schemaConfig) },
    pino({ level: 'silent' }),
  );
  return { instance, keySecret, controlKeyId };
}

/** A running database whose live instance row points at `endpointUrl`. */
async function runningDatabase(
  cp: TestControlPlane,
  endpoint: { url: string; keySecret: Buffer; controlKeyId: string },
  healthStatus: string | null,
  owner: { accountId: string } = { accountId: '' },
) {
  const { db } = cp.context;
  if (!owner.accountId) owner = { accountId: await insertAccount(cp, 'pro') };
  const { id: databaseId } = await insertDatabase(cp, owner, {
    status: 'running',
    syncMode: 'poll',
    keySecret: endpoint.keySecret,
  });
  const instanceId = randomUUID();
  await db
    .insertInto('instances')
    .values({
      id: instanceId,
      database_id: databaseId,
      driver: 'process',
      endpoint_url: endpoint.url,
      private_url: endpoint.url,
      control_key_id: endpoint.controlKeyId,
      health_status: healthStatus,
    })
    .execute();
  return { databaseId, instanceId };
}

async function instanceRow(cp: TestControlPlane, instanceId: string) {
  return cp.context.db
    .selectFrom('instances')
    .selectAll()
    .where('id', '=', instanceId)
    .executeTakeFirstOrThrow();
}

function healthReached(cp: TestControlPlane, instanceId: string, status: string) {
  return eventually(
    async () => {
      const row = await instanceRow(cp, instanceId);
      return row.health_status === status ? row : undefined;
    },
    20_000,
    `health ${status}`,
  );
}

describe.each(POSTGRES_STORE)('the health monitor on the %s store', (kind) => {
  let cp: TestControlPlane;
  let source: Source;
  const instances: RunningInstance[] = [];

  beforeAll(async () => {
    source = await testMariaDb().createDatabase(
      "CREATE TABLE item (id INT PRIMARY KEY, name VARCHAR(20)); INSERT INTO item VALUES (1, 'one'), (2, 'two')",
    );
    cp = await startTestControlPlane(kind, { roles: ['api', 'health-monitor'] });
  });
  afterAll(async () => {
    await cp?.close();
    for (const instance of instances) await instance.close().catch(() => {});
    await source?.drop();
  });

  /**
   * A real instance polling every half second (closed with the suite) and a running database
   * whose instance row is it.
   */
  async function monitoredDatabase(
    healthStatus: string | null,
    schemaConfig: Record<string, unknown> = {},
    owner?: { accountId: string },
  ) {
    const { instance, keySecret, controlKeyId } = await realInstance(source, {
      sync: { mode: 'poll', interval: 0.5 },
      ...schemaConfig,
    });
    instances.push(instance);
    const endpoint = { url: instance.url, keySecret, controlKeyId };
    return { instance, endpoint, ...(await runningDatabase(cp, endpoint, healthStatus, owner)) };
  }

  it('records a healthy instance without an event on the first reading', async () => {
    const { databaseId, instanceId } = await monitoredDatabase(null);
    const row = await healthReached(cp, instanceId, 'ok');
    expect(row.row_counts).toEqual({ item: 2 });
    expect(row.snapshot_age_ms).toEqual(expect.any(Number));
    expect(row.swap_count).toEqual(expect.any(Number));
    expect(row.last_health_check).toBeInstanceOf(Date);
    // Another reading or two: still nothing to report.
    await new Promise((resolve) => setTimeout(resolve, 1200));
    expect(await auditTypes(cp.context.db, databaseId)).toEqual([]);
  });

  it('reports degraded replication as instance.unhealthy, and its return as instance.recovered', async () => {
    const { databaseId, instanceId } = await monitoredDatabase(null);
    await healthReached(cp, instanceId, 'ok');
    // The source loses the table: every poll fails, the instance reports itself degraded.
    await source.exec('RENAME TABLE item TO item_away');
    try {
      await healthReached(cp, instanceId, 'degraded');
    } finally {
      await source.exec('RENAME TABLE item_away TO item');
    }
    await healthReached(cp, instanceId, 'ok');
    await eventually(
      async () => (await auditTypes(cp.context.db, databaseId)).includes('instance.recovered'),
      10_000,
      'instance.recovered',
    );
    expect(await auditTypes(cp.context.db, databaseId)).toEqual([
      'instance.unhealthy',
      'instance.recovered',
    ]);
    const events = await cp.context.db
      .selectFrom('audit_events')
      .select(['event_type', 'payload'])
      .where('database_id', '=', databaseId)
      .orderBy('created_at')
      .execute();
    expect(events[0]?.payload).toMatchObject({ databaseId, healthStatus: 'degraded' });
    const notifications = await cp.context.db
      .selectFrom('notifications')
      .select(['event_type', 'severity'])
      .where('database_id', '=', databaseId)
      .orderBy('created_at')
      .execute();
    expect(notifications).toEqual([
      { event_type: 'instance.unhealthy', severity: 'error' },
      { event_type: 'instance.recovered', severity: 'success' },
    ]);
  });

  it('reports an instance over its memory cap as cap_exceeded', async () => {
    const { databaseId, instanceId } = await monitoredDatabase('ok', { memory_cap_mb: 0.0001 });
    await healthReached(cp, instanceId, 'cap_exceeded');
    const [event] = await cp.context.db
      .selectFrom('audit_events')
      .select(['event_type', 'payload'])
      .where('database_id', '=', databaseId)
      .execute();
    expect(event).toMatchObject({
      event_type: 'instance.unhealthy',
      payload: { healthStatus: 'cap_exceeded' },
    });
  });

  it('reports an instance that does not answer as unreachable, once', async () => {
    const { instance, databaseId, instanceId } = await monitoredDatabase(null);
    await healthReached(cp, instanceId, 'ok');
    const before = await instanceRow(cp, instanceId);
    await instance.close();
    const after = await healthReached(cp, instanceId, 'unreachable');
    // What the last answer said is kept; only the health and the check time move.
    expect(after.row_counts).toEqual(before.row_counts);
    await new Promise((resolve) => setTimeout(resolve, 1200));
    expect(await auditTypes(cp.context.db, databaseId)).toEqual(['instance.unhealthy']);
  });

  it('learns of replication paused and resumed at the instance with an admin key', async () => {
    const owner = await caller(cp, 'paused-at-instance@example.com', 'pro');
    const { databaseId, instanceId, endpoint } = await monitoredDatabase(null, {}, owner);
    await healthReached(cp, instanceId, 'ok');
    const status = async () =>
      (await cp.request('GET', `/v1/databases/${databaseId}/instance`, { token: owner.token }))
        .body as {
        database: { replicationPaused: boolean };
        allowedActions: Record<string, { allowed: boolean }>;
      };
    expect((await status()).database.replicationPaused).toBe(false);

    const adminKey = deriveApiKey(endpoint.keySecret, endpoint.controlKeyId);
    const atInstance = (path: string) =>
      fetch(`${endpoint.url}${path}`, {
        method: 'POST',
        headers: { authorization: `Bearer ${adminKey}` },
      });
    expect((await atInstance('/replication/pause')).status).toBe(200);
    await eventually(
      async () => ((await status()).database.replicationPaused ? true : undefined),
      5_000,
      'replicationPaused true',
    );
    expect((await status()).allowedActions).toMatchObject({
      'resume-replication': { allowed: true },
    });

    expect((await atInstance('/replication/resume')).status).toBe(200);
    await eventually(
      async () => ((await status()).database.replicationPaused ? undefined : true),
      5_000,
      'replicationPaused false',
    );
    expect(await auditTypes(cp.context.db, databaseId)).toEqual([
      'database.replication_paused',
      'database.replication_resumed',
    ]);
    const payloads = await cp.context.db
      .selectFrom('audit_events')
      .select('payload')
      .where('database_id', '=', databaseId)
      .orderBy('created_at')
      .execute();
    expect(payloads.map((row) => row.payload)).toEqual([
      { replicationPaused: true, source: 'instance' },
      { replicationPaused: false, source: 'instance' },
    ]);
  });

  it('leaves instances of databases that are not running alone', async () => {
    const { databaseId, instanceId } = await runningDatabase(
      cp,
      { url: 'http://127.0.0.1:1', keySecret: newKeySecret(), controlKeyId: newKeyId() },
      'ok',
    );
    await cp.context.db
      .updateTable('databases')
      .set({ status: 'paused' })
      .where('id', '=', databaseId)
      .execute();
    await new Promise((resolve) => setTimeout(resolve, 1500));
    const row = await instanceRow(cp, instanceId);
    expect(row.health_status).toBe('ok');
    expect(row.last_health_check).toBeNull();
  });
});
