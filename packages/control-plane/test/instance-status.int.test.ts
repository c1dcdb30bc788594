import { randomUUID } from 'node:crypto';
import { appendFileSync, mkdirSync, writeFileSync } from 'node:fs';
import { join } from 'node:path';
import type { RunningInstance } from '@replix/instance';
import { deriveApiKey, newKeyId } from '@replix/instance-protocol';
import type { TestDatabase } from '@replix/testkit';
import { testMariaDb } from '@replix/testkit/vitest';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { notify } from '../src/adapters/events/notifications.ts';
import { databaseConfigHash } from '../src/application/builder/config-hash.ts';
import { ACTIONS } from '../src/domain/database-lifecycle.ts';
import {
  EMBEDDED_STORE,
  startTestControlPlane,
  type TestControlPlane,
} from './control-plane-harness.ts';
import {
  type Caller,
  caller,
  insertConnection,
  insertDatabase,
  insertInstance,
  sourceFromUrl,
  startRealInstance,
} from './lifecycle-fixtures.ts';

const REQUIRED_KEYS = [
  'database',
  'connection',
  'deployedInstanceConfig',
  'hasPendingChanges',
  'pendingChanges',
  'instance',
  'latestBuild',
  'allowedActions',
  'notifications',
  'unseenCount',
  'skippedCount',
  'computeUnitsLimit',
  'maxInstanceSize',
  'pollModeMinSyncInterval',
  'dataTransferGBPerMonth',
];

const GET_ROUTES = ['instance', 'metrics', 'infra-logs', 'instance-logs'];

describe.each(EMBEDDED_STORE)('instance status, metrics and logs on the %s store', (kind) => {
  let cp: TestControlPlane;
  let alice: Caller;
  let bob: Caller;
  let source: TestDatabase;

  beforeAll(async () => {
    cp = await startTestControlPlane(kind);
    alice = await caller(cp, `alice-${kind}@example.com`, 'teams');
    bob = await caller(cp, `bob-${kind}@example.com`);
    source = await testMariaDb().createDatabase(`
      CREATE TABLE authors (id INT PRIMARY KEY, name VARCHAR(40) NOT NULL);
      INSERT INTO authors VALUES (1, 'Ann'), (2, 'Bo'), (3, 'Cy');
    `);
  });
  afterAll(async () => {
    await cp?.close();
    await source?.drop();
  });

  const get = (id: string, route: string, token = alice.token) =>
    cp.request('GET', `/v1/databases/${id}/${route}`, { token });

  it('answers 401 without a token and 404 for another account on every route', async () => {
    const { id } = await insertDatabase(cp, alice, { status: 'running', withBuild: true });
    for (const route of GET_ROUTES) {
      const anonymous = await cp.request('GET', `/v1/databases/${id}/${route}`);
      expect(anonymous.status, route).toBe(401);
      const foreign = await get(id, route, bob.token);
      expect(foreign.status, route).toBe(404);
      expect(foreign.body).toEqual({ error: 'not_found', message: 'Database not found.' });
      const malformed = await get('not-a-uuid', route);
      expect(malformed.status, route).toBe(400);
      expect(malformed.body.error).toBe('validation_failed');
    }
  });

  it('gives every required field for a draft database with nothing deployed', async () => {
    const { id, connectionId } = await insertDatabase(cp, alice, { status: 'draft' });
    const started = Date.now();
    const response = await get(id, 'instance');
    expect(response.status).toBe(200);
    // The source is a closed port: availableSchemas is [] without stalling the poll.
    expect(Date.now() - started).toBeLessThan(4000);
    const body = response.body;
    expect(Object.keys(body).sort()).toEqual([...REQUIRED_KEYS].sort());
    expect(body.database).toEqual({
      id,
      name: expect.any(String),
      connectionId,
      sourceSchema: 'app',
      status: 'draft',
      region: 'eu-west-1',
      instanceSize: 'xs',
      replicas: 1,
      syncMode: 'cdc',
      syncInterval: 1,
      syncModeReason: null,
      logLevel: 'info',
      safetyNet: 0,
      replicationPaused: false,
      goal: null,
      currentBuildId: null,
      lastError: null,
      endpointUrl: null,
      createdAt: expect.any(String),
      updatedAt: expect.any(String),
    });
    expect(body.connection).toEqual({
      id: connectionId,
      name: expect.any(String),
      backend: 'mysql',
      minSyncInterval: 10,
      allowedSyncModes: ['cdc', 'poll'],
      availableSchemas: [],
    });
    expect(body.deployedInstanceConfig).toEqual({
      instanceSize: 'xs',
      taskCpu: 0.25,
      taskMemoryMb: 512,
      syncMode: 'cdc',
      syncInterval: 1,
      logLevel: 'info',
      safetyNet: 0,
      replicas: 1,
    });
    expect(body.hasPendingChanges).toBe(false);
    expect(body.instance).toBeNull();
    expect(body.latestBuild).toBeNull();
    expect(Object.keys(body.allowedActions)).toEqual([...ACTIONS]);
    expect(body.allowedActions.provision).toEqual({ allowed: true, mode: 'queued' });
    expect(body.allowedActions.delete).toEqual({ allowed: true, mode: 'immediate' });
    expect(body.allowedActions.pause).toEqual({
      allowed: false,
      mode: 'queued',
      reason: 'Pause needs a running database; this one is draft: use Provision instead.',
    });
    expect(body).toMatchObject({
      notifications: [],
      unseenCount: 0,
      skippedCount: 0,
      computeUnitsLimit: 32,
      maxInstanceSize: 'l',
      pollModeMinSyncInterval: 10,
      dataTransferGBPerMonth: 250,
    });
    expect(JSON.stringify(body)).not.toContain('key_secret');
  });

  it('lists the schemas the connection can see on a reachable source', async () => {
    const connectionId = await insertConnection(cp, alice, sourceFromUrl(source.url));
    const { id } = await insertDatabase(cp, alice, { status: 'draft', connectionId });
    const response = await get(id, 'instance');
    expect(response.status).toBe(200);
    expect(response.body.connection.availableSchemas).toContain(source.name);
    expect(response.body.connection.availableSchemas).not.toContain('information_schema');
    const { password } = sourceFromUrl(source.url);
    if (password) expect(JSON.stringify(response.body)).not.toContain(password);
  });

  it('shows the live instance, the latest build, the goal and the plan limits of a running database', async () => {
    const seeded = await insertDatabase(cp, alice, {
      status: 'running',
      withBuild: true,
      deployed: true,
    });
    const instanceId = await insertInstance(
      cp,
      seeded.id,
      'http://127.0.0.1:45678',
      newKeyId(),
      seeded.buildId,
    );
    await cp.context.db
      .updateTable('instances')
      .set({
        health_status: 'ok',
        snapshot_age_ms: 1200,
        swap_count: 4,
        row_counts: JSON.stringify({ authors: 3 }),
        last_health_check: new Date(),
      })
      .where('id', '=', instanceId)
      .execute();
    const response = await get(seeded.id, 'instance');
    expect(response.status).toBe(200);
    const body = response.body;
    expect(body.instance).toEqual({
      id: instanceId,
      databaseId: seeded.id,
      buildId: seeded.buildId,
      containerServiceArn: 'process:0',
      endpointUrl: 'http://127.0.0.1:45678',
      healthStatus: 'ok',
      snapshotAgeMs: 1200,
      swapCount: 4,
      rowCounts: { authors: 3 },
      lastHealthCheck: expect.any(String),
      // Recorded before replicas: one replica, whose reading is the instance's.
      replicaCount: 1,
      replicas: [{ ordinal: 0, healthStatus: 'ok', snapshotAgeMs: 1200, swapCount: 4 }],
      createdAt: expect.any(String),
      updatedAt: expect.any(String),
    });
    expect(body.latestBuild).toMatchObject({
      id: seeded.buildId,
      databaseId: seeded.id,
      status: 'succeeded',
      logsUrl: `/v1/builds/${seeded.buildId}/logs`,
    });
    expect(body.database.currentBuildId).toBe(seeded.buildId);
    expect(body.hasPendingChanges).toBe(false);
    expect(body.allowedActions.reload).toEqual({ allowed: true, mode: 'immediate' });
    expect(body.allowedActions.delete).toEqual({ allowed: true, mode: 'queued' });

    const pause = await cp.request('POST', `/v1/databases/${seeded.id}/pause`, {
      token: alice.token,
    });
    expect(pause.status).toBe(202);
    const pending = (await get(seeded.id, 'instance')).body;
    expect(pending.database.status).toBe('pausing');
    expect(pending.database.goal).toEqual({
      action: 'pause',
      requestedAt: expect.any(String),
      claimed: false,
    });
    expect(pending.allowedActions['cancel-goal']).toEqual({ allowed: true, mode: 'immediate' });
    expect(pending.allowedActions.reload.reason).toBe(
      'Another action is queued: pause. Cancel it first.',
    );
  });

  it('tells pending changes: settings against the deployed ones, schema config against the build', async () => {
    const seeded = await insertDatabase(cp, alice, {
      status: 'running',
      withBuild: true,
      deployed: true,
    });
    const { db } = cp.context;
    const row = () =>
      db.selectFrom('databases').selectAll().where('id', '=', seeded.id).executeTakeFirstOrThrow();
    await db
      .updateTable('builds')
      .set({ config_hash: databaseConfigHash(await row()) })
      .where('id', '=', seeded.buildId as string)
      .execute();
    expect((await get(seeded.id, 'instance')).body.hasPendingChanges).toBe(false);

    await db
      .updateTable('databases')
      .set({ sync_interval: 30 })
      .where('id', '=', seeded.id)
      .execute();
    const changed = (await get(seeded.id, 'instance')).body;
    expect(changed.hasPendingChanges).toBe(true);
    expect(changed.pendingChanges).toEqual([{ setting: 'syncInterval', appliedBy: 'reconfigure' }]);
    expect(changed.deployedInstanceConfig.syncInterval).toBe(1);

    await db
      .updateTable('databases')
      .set({ sync_interval: 1 })
      .where('id', '=', seeded.id)
      .execute();
    expect((await get(seeded.id, 'instance')).body.pendingChanges).toEqual([]);
    // A schema config change through the API: its answer, the status and a reconfigure each
    // say that only a rebuild applies it.
    const patched = await cp.request('PATCH', `/v1/databases/${seeded.id}`, {
      token: alice.token,
      body: { schemaConfig: { query: { nested_default_limit: 10 } } },
    });
    expect(patched.status).toBe(200);
    const schemaPending = [{ setting: 'schema', appliedBy: 'rebuild' }];
    expect(patched.body.pendingChanges).toEqual(schemaPending);
    const status = (await get(seeded.id, 'instance')).body;
    expect(status.hasPendingChanges).toBe(true);
    expect(status.pendingChanges).toEqual(schemaPending);
    const reconfigured = await cp.request('POST', `/v1/databases/${seeded.id}/reconfigure`, {
      token: alice.token,
    });
    expect(reconfigured.status).toBe(202);
    expect(reconfigured.body).toEqual({ status: 'deploying', notApplied: schemaPending });
  });

  it('lists unseen notifications newest first and counts the skipped ones', async () => {
    const { id } = await insertDatabase(cp, alice, { status: 'running', withBuild: true });
    for (let n = 1; n <= 22; n++) {
      await notify(cp.context.db, {
        accountId: alice.accountId,
        databaseId: id,
        eventType: 'build.failed',
        message: `Build ${n} failed`,
        detail: n === 22 ? 'compile error' : null,
        severity: 'error',
      });
    }
    const body = (await get(id, 'instance')).body;
    expect(body.unseenCount).toBe(20);
    expect(body.skippedCount).toBe(2);
    expect(body.notifications).toHaveLength(20);
    expect(body.notifications[0]).toEqual({
      id: expect.any(String),
      eventType: 'build.failed',
      message: 'Build 22 failed',
      detail: 'compile error',
      severity: 'error',
      sticky: false,
      createdAt: expect.any(String),
    });
    expect(body.notifications.at(-1).message).toBe('Build 3 failed');
  });

  describe('metrics', () => {
    let instance: RunningInstance;
    let databaseId: string;

    beforeAll(async () => {
      const seeded = await insertDatabase(cp, alice, { status: 'running', withBuild: true });
      databaseId = seeded.id;
      const controlKeyId = newKeyId();
      instance = await startRealInstance(source.url, seeded.keySecret, controlKeyId);
      await insertInstance(cp, databaseId, instance.url, controlKeyId, seeded.buildId);
      const headers = { authorization: `Bearer ${deriveApiKey(seeded.keySecret, controlKeyId)}` };
      for (const query of ['authors { id name }', 'authors { id }', 'nowhere { id }']) {
        await fetch(`${instance.url}/query`, { method: 'POST', body: query, headers });
      }
    });
    afterAll(() => instance?.close());

    it("reports the running instance's metrics", async () => {
      const response = await get(databaseId, 'metrics');
      expect(response.status).toBe(200);
      expect(response.body).toEqual({
        queriesOk: 2,
        queriesErr: 1,
        snapshotBytes: expect.any(Number),
        snapshotAgeSeconds: expect.any(Number),
        swapCount: 0,
        tableRows: { authors: 3 },
        queryDurationSum: expect.any(Number),
        queryDurationCount: 2,
      });
      expect(response.body.snapshotBytes).toBeGreaterThan(0);
    });

    it('answers 503 instance_unavailable without a running instance or when it does not answer', async () => {
      const { id } = await insertDatabase(cp, alice, { status: 'paused', withBuild: true });
      const none = await get(id, 'metrics');
      expect(none.status).toBe(503);
      expect(none.body).toEqual({
        error: 'instance_unavailable',
        message: 'The database has no running instance.',
      });
      await insertInstance(cp, id, 'http://127.0.0.1:1');
      const silent = await get(id, 'metrics');
      expect(silent.status).toBe(503);
      expect(silent.body.error).toBe('instance_unavailable');
      expect(silent.body.message).not.toContain('127.0.0.1');
    });
  });

  describe('infra-logs', () => {
    it('is empty and done when there has been no deploy', async () => {
      const { id } = await insertDatabase(cp, alice, { status: 'draft' });
      const response = await get(id, 'infra-logs');
      expect(response.status).toBe(200);
      expect(response.body).toEqual({ lines: [], nextToken: null, done: true });
    });

    it('pages through the latest deployment with nextToken until it has finished', async () => {
      const { id } = await insertDatabase(cp, alice, { status: 'deploying', withBuild: true });
      const { db } = cp.context;
      const older = randomUUID();
      const deploymentId = randomUUID();
      await db
        .insertInto('deployments')
        .values({
          id: older,
          database_id: id,
          action: 'provision',
          status: 'succeeded',
          started_at: new Date(Date.now() - 60_000),
          finished_at: new Date(Date.now() - 50_000),
        })
        .execute();
      await db
        .insertInto('deployments')
        .values({ id: deploymentId, database_id: id, action: 'redeploy', status: 'running' })
        .execute();
      const line = (stream: string, message: string, ts: number) =>
        db.insertInto('log_lines').values({ stream_id: stream, ts, message }).execute();
      await line(older, 'old deploy line', 1000);
      await line(deploymentId, 'Stopping the previous instance', 2000);
      await line(deploymentId, 'Starting instance on port 4000', 2001);

      const first = (await get(id, 'infra-logs')).body;
      expect(first.lines).toEqual([
        { message: 'Stopping the previous instance', timestamp: 2000 },
        { message: 'Starting instance on port 4000', timestamp: 2001 },
      ]);
      expect(first.nextToken).toMatch(/^\d+$/);
      expect(first.done).toBe(false);

      const idle = (await get(id, `infra-logs?nextToken=${first.nextToken}`)).body;
      expect(idle).toEqual({ lines: [], nextToken: first.nextToken, done: false });

      await line(deploymentId, 'Instance is serving', 2002);
      await db
        .updateTable('deployments')
        .set({ status: 'succeeded', finished_at: new Date() })
        .where('id', '=', deploymentId)
        .execute();
      const last = (await get(id, `infra-logs?nextToken=${first.nextToken}`)).body;
      expect(last.lines).toEqual([{ message: 'Instance is serving', timestamp: 2002 }]);
      expect(last.done).toBe(true);
      expect(Number(last.nextToken)).toBeGreaterThan(Number(first.nextToken));
    });

    it('rejects a malformed nextToken', async () => {
      const { id } = await insertDatabase(cp, alice, { status: 'draft' });
      const response = await get(id, 'infra-logs?nextToken=abc');
      expect(response.status).toBe(400);
      expect(response.body.error).toBe('validation_failed');
      expect(response.body.message).toContain('nextToken');
    });
  });

  describe('instance-logs', () => {
    it('is empty and done without a live instance', async () => {
      const { id } = await insertDatabase(cp, alice, { status: 'paused', withBuild: true });
      const response = await get(id, 'instance-logs');
      expect(response.status).toBe(200);
      expect(response.body).toEqual({ lines: [], nextToken: null, done: true });
    });

    it("tails the live instance's log through the driver", async () => {
      const { id } = await insertDatabase(cp, alice, { status: 'running', withBuild: true });
      const instanceId = await insertInstance(cp, id, 'http://127.0.0.1:1');
      // The process driver's log file of that instance, as the child would write it.
      const folder = join(cp.dataDir, 'instances', instanceId);
      mkdirSync(folder, { recursive: true });
      const log = join(folder, 'instance.log');
      writeFileSync(
        log,
        `${JSON.stringify({ level: 30, time: 1700000000000, msg: 'snapshot loaded' })}\nplain line\n`,
      );
      const first = (await get(id, 'instance-logs')).body;
      expect(first.lines).toEqual([
        { message: 'snapshot loaded', timestamp: 1700000000000 },
        { message: 'plain line', timestamp: expect.any(Number) },
      ]);
      expect(first.done).toBe(false);
      expect(typeof first.nextToken).toBe('string');

      appendFileSync(log, `${JSON.stringify({ level: 30, time: 1700000000500, msg: 'swap' })}\n`);
      const next = (await get(id, `instance-logs?nextToken=${encodeURIComponent(first.nextToken)}`))
        .body;
      expect(next).toEqual({
        lines: [{ message: 'swap', timestamp: 1700000000500 }],
        nextToken: expect.any(String),
        done: false,
      });
    });
  });
});
