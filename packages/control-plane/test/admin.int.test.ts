import { testMariaDb } from '@replix/testkit/vitest';
import { afterAll, beforeAll, describe, expect, it, vi } from 'vitest';
import {
  EMBEDDED_STORE,
  startTestControlPlane,
  type TestControlPlane,
} from './control-plane-harness.ts';
import {
  caller,
  insertAccount,
  insertBuild,
  insertConnection,
  insertDatabase,
  insertInstance,
} from './lifecycle-fixtures.ts';
import {
  databaseRow,
  goal,
  instanceProcesses,
  killInstanceProcesses,
  liveInstances,
  seedProvision,
  statusReached,
} from './reconciler-fixtures.ts';

// The deprovision test builds and deploys a real instance first.
vi.setConfig({ testTimeout: 120_000 });

async function customer(cp: TestControlPlane, admin: string, id: string) {
  const response = await cp.request('GET', '/v1/admin/customers', { token: admin });
  expect(response.status).toBe(200);
  return (response.body as Array<{ id: string }>).find((row) => row.id === id) as
    | Record<string, unknown>
    | undefined;
}

async function accountAudit(cp: TestControlPlane, accountId: string) {
  return cp.context.db
    .selectFrom('audit_events')
    .select(['event_type', 'payload', 'database_id'])
    .where('account_id', '=', accountId)
    .orderBy('seq')
    .execute();
}

describe.each(EMBEDDED_STORE)('admin operations on the %s store', (kind) => {
  let cp: TestControlPlane;
  let admin: string;

  beforeAll(async () => {
    cp = await startTestControlPlane(kind);
    admin = await cp.token('ops@example.com', { admin: true });
  });
  afterAll(() => cp?.close());

  it('are for service-admins only: 403 for a customer token, 401 without one', async () => {
    const me = await caller(cp, 'not-admin@example.com');
    const routes: Array<[string, string, unknown?]> = [
      ['GET', '/v1/admin/customers'],
      ['PATCH', `/v1/admin/customers/${me.accountId}/plan`, { plan: 'enterprise' }],
      ['POST', `/v1/admin/customers/${me.accountId}/deprovision`],
    ];
    for (const [method, path, body] of routes) {
      const forbidden = await cp.request(method, path, { token: me.token, body });
      expect(forbidden.status, `${method} ${path}`).toBe(403);
      expect(forbidden.body).toEqual({
        error: 'forbidden',
        message: 'This operation is for members of the service-admins group.',
      });
      expect((await cp.request(method, path, { body })).status).toBe(401);
    }
    // Nothing changed.
    expect((await cp.request('GET', '/v1/account', { token: me.token })).body.plan).toBe('free');
    expect((await cp.request('GET', '/v1/admin/customers', { token: admin })).status).toBe(200);
  });

  it('lists every customer with its usage computed from the store', async () => {
    const me = await caller(cp, 'usage@example.com', 'pro');
    const running = await insertDatabase(cp, me, {
      status: 'running',
      instanceSize: 's',
      withBuild: true,
    });
    await insertInstance(cp, running.id, 'http://127.0.0.1:1');
    await insertDatabase(cp, me, { status: 'paused', instanceSize: 'm' });
    const draft = await insertDatabase(cp, me);
    await insertBuild(cp, me, draft.id, 'failed');
    const old = await insertBuild(cp, me, draft.id, 'succeeded');
    await cp.context.db
      .updateTable('builds')
      .set({ created_at: new Date(Date.now() - 40 * 86_400_000) })
      .where('id', '=', old)
      .execute();
    const deleted = await insertDatabase(cp, me);
    await cp.context.db
      .updateTable('databases')
      .set({ deleted_at: new Date() })
      .where('id', '=', deleted.id)
      .execute();

    const row = await customer(cp, admin, me.accountId);
    expect(row).toEqual({
      id: me.accountId,
      email: 'usage@example.com',
      plan: 'pro',
      createdAt: expect.any(String),
      databaseCount: 3,
      runningInstanceCount: 1,
      buildsLast30Days: 2,
      lastActivityAt: expect.any(String),
      planLimit: { databases: 10, computeUnits: 8 },
      overLimit: false,
    });
    // The user's last request counts as activity.
    expect(Date.parse(row?.lastActivityAt as string)).toBeGreaterThan(Date.now() - 60_000);

    const silent = await insertAccount(cp, 'free');
    expect(await customer(cp, admin, silent)).toMatchObject({
      databaseCount: 0,
      runningInstanceCount: 0,
      buildsLast30Days: 0,
      lastActivityAt: null,
      planLimit: { databases: 3, computeUnits: 2 },
      overLimit: false,
    });
  });

  it.each([
    ['more databases than the plan allows', [{}, {}, {}, {}]],
    [
      'more compute units running',
      [
        { status: 'running', instanceSize: 's' },
        { status: 'deploying', instanceSize: 'xs' },
      ],
    ],
    ['an instance size above the largest', [{ status: 'paused', instanceSize: 'l' }]],
    ['a region without multi-region', [{ region: 'us-east-1' }]],
    ['a poll interval below the minimum', [{ syncMode: 'poll', syncInterval: 5 }]],
  ] as const)('marks a free customer overLimit with %s', async (_what, seeds) => {
    const accountId = await insertAccount(cp, 'free');
    const connectionId = await insertConnection(cp, { accountId });
    for (const seed of seeds) await insertDatabase(cp, { accountId }, { connectionId, ...seed });
    expect(await customer(cp, admin, accountId)).toMatchObject({ overLimit: true });
    // The same usage fits the enterprise plan.
    await cp.context.db
      .updateTable('accounts')
      .set({ plan: 'enterprise' })
      .where('id', '=', accountId)
      .execute();
    expect(await customer(cp, admin, accountId)).toMatchObject({ overLimit: false });
  });

  it('PATCH plan overrides the plan, its limits apply at once, and the audit log says who', async () => {
    const me = await caller(cp, 'override@example.com');
    const connectionId = await insertConnection(cp, me);
    for (let i = 0; i < 3; i++) await insertDatabase(cp, me, { connectionId });
    const create = () =>
      cp.request('POST', '/v1/databases', {
        token: me.token,
        body: { name: 'fourth', connectionId, sourceSchema: 'app' },
      });
    expect((await create()).body.error).toBe('plan_limit');

    const changed = await cp.request('PATCH', `/v1/admin/customers/${me.accountId}/plan`, {
      token: admin,
      body: { plan: 'enterprise' },
    });
    expect(changed.status).toBe(200);
    expect(changed.body).toEqual({ id: me.accountId, plan: 'enterprise' });
    expect((await create()).status).toBe(201);
    const account = (await cp.request('GET', '/v1/account', { token: me.token })).body;
    expect(account).toMatchObject({ plan: 'enterprise', limits: { databases: 1000 } });
    expect(await customer(cp, admin, me.accountId)).toMatchObject({
      plan: 'enterprise',
      planLimit: { databases: 1000, computeUnits: 1024 },
    });

    const events = await cp.request('GET', '/v1/account/audit-log?eventType=account.plan_changed', {
      token: me.token,
    });
    expect(events.body.events).toEqual([
      expect.objectContaining({
        entityType: 'account',
        entityId: me.accountId,
        payload: {
          fromPlan: 'free',
          toPlan: 'enterprise',
          source: 'admin',
          adminEmail: 'ops@example.com',
          adminUserId: expect.any(String),
        },
      }),
    ]);
  });

  it('PATCH plan validates the plan and the customer', async () => {
    const me = await caller(cp, 'override-bad@example.com');
    const bad = await cp.request('PATCH', `/v1/admin/customers/${me.accountId}/plan`, {
      token: admin,
      body: { plan: 'platinum' },
    });
    expect(bad.status).toBe(400);
    expect(bad.body.error).toBe('validation_failed');
    const unknown = await cp.request(
      'PATCH',
      '/v1/admin/customers/00000000-0000-4000-8000-000000000000/plan',
      { token: admin, body: { plan: 'pro' } },
    );
    expect(unknown.status).toBe(404);
    expect(unknown.body).toEqual({ error: 'not_found', message: 'Customer not found.' });
    const deprovision = await cp.request(
      'POST',
      '/v1/admin/customers/00000000-0000-4000-8000-000000000000/deprovision',
      { token: admin },
    );
    expect(deprovision.status).toBe(404);
  });

  it('deprovision records terminate goals for every deployed database and drops queued starts', async () => {
    const accountId = await insertAccount(cp, 'business');
    const owner = { accountId };
    const connectionId = await insertConnection(cp, owner);
    const seed = (extra: Parameters<typeof insertDatabase>[2]) =>
      insertDatabase(cp, owner, { connectionId, withBuild: true, ...extra });
    const running = await seed({ status: 'running' });
    const paused = await seed({ status: 'paused' });
    const failed = await seed({ status: 'failed' });
    const draft = await seed({ status: 'draft', withBuild: false });
    const queuedProvision = await seed({
      status: 'building',
      withBuild: false,
      goal: goal('provision', 'draft'),
    });
    const queuedResize = await seed({
      status: 'deploying',
      goal: goal('resize', 'running', { instanceSize: 'm' }),
    });
    const started = await seed({
      status: 'building',
      goal: goal('rebuild', 'running', { claimedAt: new Date().toISOString() }),
    });

    const response = await cp.request('POST', `/v1/admin/customers/${accountId}/deprovision`, {
      token: admin,
    });
    expect(response.status).toBe(200);
    // running, paused, failed, the queued provision and the queued resize; not the started rebuild.
    expect(response.body).toEqual({ ok: false, databasesAffected: 5 });

    const state = async (id: string) => {
      const row = await databaseRow(cp.context.db, id);
      return { status: row.status, action: row.goal?.action ?? null };
    };
    for (const db of [running, paused, failed, queuedResize]) {
      expect(await state(db.id)).toEqual({ status: 'terminating', action: 'terminate' });
    }
    expect(await state(draft.id)).toEqual({ status: 'draft', action: null });
    expect(await state(queuedProvision.id)).toEqual({ status: 'draft', action: null });
    expect(await state(started.id)).toEqual({ status: 'building', action: 'rebuild' });
    expect((await databaseRow(cp.context.db, queuedResize.id)).goal?.fromStatus).toBe('running');

    const audit = await accountAudit(cp, accountId);
    const adminPayload = { adminEmail: 'ops@example.com', adminUserId: expect.any(String) };
    expect(audit.filter((e) => e.event_type === 'database.terminate')).toHaveLength(4);
    for (const event of audit.filter((e) => e.event_type.startsWith('database.'))) {
      expect(event.payload).toMatchObject(adminPayload);
    }
    expect(audit.filter((e) => e.event_type === 'database.cancel_goal')).toHaveLength(2);
    expect(audit.at(-1)).toMatchObject({
      event_type: 'account.deprovisioned',
      payload: { databasesAffected: 5, inProgress: 1, ...adminPayload },
    });

    // Called again: nothing left to stop but the started rebuild.
    const again = await cp.request('POST', `/v1/admin/customers/${accountId}/deprovision`, {
      token: admin,
    });
    expect(again.body).toEqual({ ok: false, databasesAffected: 0 });
  });
});

describe.each(EMBEDDED_STORE)('admin deprovision with the reconciler on the %s store', (kind) => {
  let cp: TestControlPlane;
  let source: Awaited<ReturnType<ReturnType<typeof testMariaDb>['createDatabase']>>;

  beforeAll(async () => {
    source = await testMariaDb().createDatabase(
      'CREATE TABLE item (id INT PRIMARY KEY); INSERT INTO item VALUES (1), (2);',
    );
    cp = await startTestControlPlane(kind, { roles: ['api', 'reconciler', 'builder'] });
  });
  afterAll(async () => {
    const dataDir = cp?.dataDir;
    await cp?.close();
    if (dataDir) killInstanceProcesses(dataDir);
    await source?.drop();
  });

  it('terminates a running instance: the process stops and the database ends terminated', async () => {
    const db = cp.context.db;
    const seeded = await seedProvision(db, cp.context.secrets, source.url);
    await statusReached(db, seeded.databaseId, 'running');
    const [instance] = await liveInstances(db, seeded.databaseId);
    expect(instanceProcesses(cp.dataDir)).toEqual([instance?.pid]);

    const admin = await cp.token('ops@example.com', { admin: true });
    const before = await customer(cp, admin, seeded.accountId);
    expect(before).toMatchObject({ runningInstanceCount: 1, databaseCount: 1 });

    const response = await cp.request(
      'POST',
      `/v1/admin/customers/${seeded.accountId}/deprovision`,
      { token: admin },
    );
    expect(response.body).toEqual({ ok: true, databasesAffected: 1 });
    const row = await statusReached(db, seeded.databaseId, 'terminated');
    expect(row.current_build_id).toEqual(expect.any(String)); // the record and builds are kept
    expect(await liveInstances(db, seeded.databaseId)).toEqual([]);
    expect(instanceProcesses(cp.dataDir)).toEqual([]);
    expect(await customer(cp, admin, seeded.accountId)).toMatchObject({
      runningInstanceCount: 0,
      databaseCount: 1,
    });
    const types = (await accountAudit(cp, seeded.accountId)).map((e) => e.event_type);
    expect(types).toEqual(
      expect.arrayContaining([
        'database.terminate',
        'account.deprovisioned',
        'database.terminated',
      ]),
    );
  });
});
