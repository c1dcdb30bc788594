import { randomUUID } from 'node:crypto';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import {
  CONTROL_PLANE_REVISION,
  HEARTBEAT_STALE_MS,
} from '../src/adapters/store/heartbeat-store.ts';
import {
  EMBEDDED_STORE,
  startTestControlPlane,
  type TestControlPlane,
} from './control-plane-harness.ts';
import { caller, insertDatabase } from './lifecycle-fixtures.ts';

describe.each(EMBEDDED_STORE)('system health on the %s store', (kind) => {
  let cp: TestControlPlane;
  let alice: { token: string; accountId: string };
  let bob: { token: string; accountId: string };
  const aliceBuilds: string[] = [];
  let bobBuild: string;
  let timedBuild: string;
  let measuredBuild: string;

  beforeAll(async () => {
    cp = await startTestControlPlane(kind);
    const db = cp.context.db;
    alice = await caller(cp, 'alice@example.com');
    bob = await caller(cp, 'bob@example.com');
    const now = Date.now();
    const stale = new Date(now - HEARTBEAT_STALE_MS - 5000);
    const live = new Date(now);
    const beat = (name: string, region: string, revision: number, lastSeen: Date) => ({
      process_id: randomUUID(),
      name,
      region,
      revision,
      started_at: lastSeen,
      last_seen_at: lastSeen,
    });
    await db
      .insertInto('service_heartbeats')
      .values([
        beat('reconciler', 'eu-west-1', CONTROL_PLANE_REVISION, live),
        beat('reconciler', 'us-east-1', CONTROL_PLANE_REVISION + 1, live),
        beat('reconciler', 'eu-west-1', 0, stale),
        beat('builder', 'us-east-1', CONTROL_PLANE_REVISION, live),
        beat('builder', 'eu-west-1', CONTROL_PLANE_REVISION, stale),
        beat('health-monitor', 'us-east-1', CONTROL_PLANE_REVISION, live),
        beat('health-monitor', 'eu-west-1', CONTROL_PLANE_REVISION, stale),
      ])
      .execute();

    // Databases: alice's in both regions, bob's in eu-west-1.
    const claimedBuild = randomUUID();
    const finishedBuild = randomUUID();
    const { id: aliceEu } = await insertDatabase(cp, alice, {
      name: 'eu',
      status: 'running',
      goal: { action: 'rebuild', fromStatus: 'running', requestedAt: new Date(now).toISOString() },
    });
    const { id: aliceUs } = await insertDatabase(cp, alice, {
      name: 'us',
      status: 'running',
      region: 'us-east-1',
      goal: {
        action: 'rebuild',
        fromStatus: 'running',
        buildId: finishedBuild,
        requestedAt: new Date(now).toISOString(),
        claimedAt: new Date(now).toISOString(),
      },
    });
    const { id: bobEu } = await insertDatabase(cp, bob, {
      name: 'bob',
      status: 'running',
      goal: {
        action: 'provision',
        fromStatus: 'draft',
        buildId: claimedBuild,
        requestedAt: new Date(now).toISOString(),
        claimedAt: new Date(now).toISOString(),
      },
    });
    const build = (
      id: string,
      databaseId: string,
      accountId: string,
      region: string,
      status: string,
      minutesAgo: number,
      extra: { attempts?: number; started?: Date; finished?: Date; seconds?: number } = {},
    ) => ({
      id,
      database_id: databaseId,
      account_id: accountId,
      region,
      status,
      attempts: extra.attempts ?? 1,
      started_at: extra.started ?? null,
      finished_at: extra.finished ?? null,
      duration_seconds: extra.seconds ?? null,
      created_at: new Date(now - minutesAgo * 60_000),
    });
    const rows = [];
    // Twelve of alice's eu builds: 3 queued, 2 failed for good, the rest succeeded.
    for (let n = 0; n < 12; n++) {
      const id = randomUUID();
      aliceBuilds.push(id);
      const status = n < 3 ? 'queued' : n < 5 ? 'failed' : 'succeeded';
      rows.push(
        build(id, aliceEu, alice.accountId, 'eu-west-1', status, 100 - n, {
          attempts: status === 'failed' ? 3 : 1,
        }),
      );
    }
    timedBuild = randomUUID();
    measuredBuild = randomUUID();
    const started = new Date(now - 90_000);
    rows.push(
      build(finishedBuild, aliceUs, alice.accountId, 'us-east-1', 'succeeded', 5, {
        started,
        finished: new Date(started.getTime() + 42_500),
      }),
      build(timedBuild, aliceUs, alice.accountId, 'us-east-1', 'in_progress', 4, {
        started,
        seconds: 7,
      }),
      build(measuredBuild, aliceUs, alice.accountId, 'us-east-1', 'failed', 3, { attempts: 1 }),
      build(claimedBuild, bobEu, bob.accountId, 'eu-west-1', 'in_progress', 1, { started }),
    );
    bobBuild = claimedBuild;
    await db.insertInto('builds').values(rows).execute();
    await db
      .insertInto('deployments')
      .values([
        {
          id: randomUUID(),
          database_id: aliceUs,
          build_id: finishedBuild,
          action: 'provision',
          status: 'failed',
          started_at: new Date(now - 60_000),
          finished_at: new Date(now - 30_000),
        },
        {
          id: randomUUID(),
          database_id: aliceEu,
          build_id: null,
          action: 'provision',
          status: 'failed',
          started_at: new Date(now - 26 * 3600_000),
          finished_at: new Date(now - 25 * 3600_000),
        },
        {
          id: randomUUID(),
          database_id: aliceEu,
          build_id: null,
          action: 'redeploy',
          status: 'succeeded',
          started_at: new Date(now - 60_000),
          finished_at: new Date(now - 30_000),
        },
      ])
      .execute();
  });
  afterAll(() => cp?.close());

  it('reports services, builders, queues and sidecars from real data', async () => {
    const response = await cp.request('GET', '/v1/system/health', { token: alice.token });
    expect(response.status).toBe(200);
    const latest = CONTROL_PLANE_REVISION;
    expect(response.body.services).toEqual([
      // This test's control plane runs the api role itself.
      {
        name: 'api',
        runningRevision: latest,
        latestRevision: latest,
        runningCount: 1,
        desiredCount: 1,
      },
      {
        name: 'reconciler',
        runningRevision: latest,
        latestRevision: latest,
        runningCount: 2,
        desiredCount: 1,
      },
      {
        name: 'builder',
        runningRevision: latest,
        latestRevision: latest,
        runningCount: 1,
        desiredCount: 1,
      },
      {
        name: 'health-monitor',
        runningRevision: latest,
        latestRevision: latest,
        runningCount: 1,
        desiredCount: 1,
      },
    ]);
    expect(response.body.builderServices).toEqual([
      {
        region: 'eu-west-1',
        runningRevision: 0,
        latestRevision: latest,
        runningCount: 0,
        desiredCount: 1,
      },
      {
        region: 'us-east-1',
        runningRevision: latest,
        latestRevision: latest,
        runningCount: 1,
        desiredCount: 1,
      },
    ]);
    expect(response.body.queues).toEqual([
      {
        region: 'eu-west-1',
        build: { waiting: 3, inFlight: 1 },
        deploy: { waiting: 1, inFlight: 1 },
        buildResults: { waiting: 0, inFlight: 0 },
        dlq: { waiting: 2 },
        deployDlq: { waiting: 0 },
      },
      {
        region: 'us-east-1',
        build: { waiting: 0, inFlight: 1 },
        deploy: { waiting: 0, inFlight: 1 },
        buildResults: { waiting: 1, inFlight: 0 },
        dlq: { waiting: 0 },
        deployDlq: { waiting: 1 },
      },
    ]);
    expect(response.body.sidecarHealth).toEqual([
      { region: 'eu-west-1', ok: false, latencyMs: null },
      { region: 'us-east-1', ok: true, latencyMs: expect.any(Number) },
    ]);
    expect(response.body.sidecarHealth[1].latencyMs).toBeGreaterThanOrEqual(0);
  });

  it("shows the caller's last ten builds per region", async () => {
    const response = await cp.request('GET', '/v1/system/health', { token: alice.token });
    const [eu, us] = response.body.recentBuilds;
    expect(eu.region).toBe('eu-west-1');
    expect(eu.builds.map((b: { id: string }) => b.id)).toEqual(aliceBuilds.slice(2).reverse());
    expect(eu.builds[9]).toEqual({
      id: aliceBuilds[2],
      status: 'queued',
      startedAt: null,
      durationMs: null,
      logsUrl: `/v1/builds/${aliceBuilds[2]}/logs`,
    });
    expect(us.region).toBe('us-east-1');
    expect(us.builds).toHaveLength(3);
    expect(us.builds[0]).toMatchObject({ id: measuredBuild, status: 'failed', durationMs: null });
    expect(us.builds[1]).toMatchObject({
      id: timedBuild,
      status: 'in_progress',
      startedAt: expect.any(String),
      durationMs: 7000,
    });
    expect(us.builds[2]).toMatchObject({ status: 'succeeded', durationMs: 42_500 });
    const bobs = await cp.request('GET', '/v1/system/health', { token: bob.token });
    expect(bobs.body.recentBuilds).toEqual([
      { region: 'eu-west-1', builds: [expect.objectContaining({ id: bobBuild })] },
      { region: 'us-east-1', builds: [] },
    ]);
    // Queues are platform-wide, the same for every caller.
    expect(bobs.body.queues).toEqual(response.body.queues);
  });

  it("shows admins every account's builds", async () => {
    const admin = await cp.token('root@example.com', { admin: true });
    const response = await cp.request('GET', '/v1/system/health', { token: admin });
    expect(response.status).toBe(200);
    const [eu, us] = response.body.recentBuilds;
    expect(eu.builds).toHaveLength(10);
    expect(eu.builds[0].id).toBe(bobBuild);
    expect(us.builds).toHaveLength(3);
  });

  it('answers 401 without a valid token', async () => {
    for (const token of [undefined, 'nonsense']) {
      const response = await cp.request('GET', '/v1/system/health', { token });
      expect(response.status).toBe(401);
      expect(response.body).toEqual({ error: 'unauthorized', message: expect.any(String) });
    }
  });
});
