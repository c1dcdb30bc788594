import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import {
  POSTGRES_STORE,
  startTestControlPlane,
  type TestControlPlane,
} from './control-plane-harness.ts';
import { type Caller, caller, insertConnection, insertDatabase } from './lifecycle-fixtures.ts';

/** Every plan limit, through the API routes that enforce it (the rules: plans.test.ts). */
describe.each(POSTGRES_STORE)('plan limits through the API on the %s store', (kind) => {
  let cp: TestControlPlane;

  beforeAll(async () => {
    cp = await startTestControlPlane(kind);
  });
  afterAll(() => cp?.close());

  const action = (who: Caller, id: string, name: string, body?: unknown) =>
    cp.request('POST', `/v1/databases/${id}/${name}`, { token: who.token, body });

  it('database count: creating one more than the plan allows is 403 plan_limit', async () => {
    const me = await caller(cp, 'count@example.com');
    const connectionId = await insertConnection(cp, me);
    const create = (name: string) =>
      cp.request('POST', '/v1/databases', {
        token: me.token,
        body: { name, connectionId, sourceSchema: 'app' },
      });
    for (const name of ['a', 'b', 'c']) expect((await create(name)).status).toBe(201);
    expect((await create('d')).body).toEqual({
      error: 'plan_limit',
      message: 'The free plan allows 3 databases; delete one or upgrade.',
    });
  });

  it('compute units: provisioning beyond the plan is 403 plan_limit; stopped ones do not count', async () => {
    const me = await caller(cp, 'units@example.com');
    await insertDatabase(cp, me, { status: 'running', instanceSize: 's' });
    await insertDatabase(cp, me, { status: 'paused', instanceSize: 's' });
    const draft = await insertDatabase(cp, me, { status: 'draft', instanceSize: 'xs' });
    const refused = await action(me, draft.id, 'provision');
    expect(refused.status).toBe(403);
    expect(refused.body).toEqual({
      error: 'plan_limit',
      message:
        'This needs 1 compute units and your instances use 2; the free plan allows 2. To go on, stop an instance or upgrade.',
    });
    // Nothing was queued.
    const status = await cp.request('GET', `/v1/databases/${draft.id}/instance`, {
      token: me.token,
    });
    expect(status.body.database.status).toBe('draft');
    expect(status.body.computeUnitsLimit).toBe(2);

    await cp.request('PATCH', `/v1/admin/customers/${me.accountId}/plan`, {
      token: await cp.token('ops@example.com', { admin: true }),
      body: { plan: 'pro' },
    });
    const accepted = await action(me, draft.id, 'provision');
    expect(accepted.status).toBe(202);
    expect(accepted.body).toEqual({ status: 'building' });
  });

  it('compute units: resume and resize count too, a pending resize at its new size', async () => {
    const me = await caller(cp, 'resize-units@example.com', 'pro'); // 8 units, up to m
    await insertDatabase(cp, me, { status: 'running', instanceSize: 'm', withBuild: true });
    const small = await insertDatabase(cp, me, {
      status: 'running',
      instanceSize: 's',
      withBuild: true,
    });
    const paused = await insertDatabase(cp, me, {
      status: 'paused',
      instanceSize: 'xs',
      withBuild: true,
    });
    const grown = await action(me, small.id, 'resize', { instanceSize: 'm' });
    expect(grown.status).toBe(202); // 4 + 4 = 8
    const resumed = await action(me, paused.id, 'resume');
    expect(resumed.status).toBe(403);
    expect(resumed.body.message).toContain('This needs 1 compute units and your instances use 8');
  });

  it('instance size: resizing above the largest size is 403 plan_limit', async () => {
    const me = await caller(cp, 'resize-max@example.com', 'pro');
    const db = await insertDatabase(cp, me, {
      status: 'running',
      instanceSize: 's',
      withBuild: true,
    });
    const response = await action(me, db.id, 'resize', { instanceSize: 'l' });
    expect(response.status).toBe(403);
    expect(response.body).toEqual({
      error: 'plan_limit',
      message: "Instance size l is above the pro plan's largest, m; upgrade to use it.",
    });
    const created = await cp.request('POST', '/v1/databases', {
      token: me.token,
      body: { name: 'big', connectionId: db.connectionId, sourceSchema: 'app', instanceSize: 'xl' },
    });
    expect(created.body.error).toBe('plan_limit');
  });

  it('region: a non-default region needs Teams or above, on databases and connections', async () => {
    const me = await caller(cp, 'region@example.com', 'pro');
    const connectionId = await insertConnection(cp, me);
    const database = await cp.request('POST', '/v1/databases', {
      token: me.token,
      body: { name: 'us', connectionId, sourceSchema: 'app', region: 'us-east-1' },
    });
    expect(database.status).toBe(403);
    expect(database.body).toEqual({
      error: 'plan_limit',
      message:
        'Region us-east-1 needs a plan with multi-region placement (Teams or above); the pro plan has eu-west-1 only.',
    });
    const connection = await cp.request('PATCH', `/v1/connections/${connectionId}`, {
      token: me.token,
      body: { defaultRegion: 'us-east-1' },
    });
    expect(connection.status).toBe(403);
    expect(connection.body.error).toBe('plan_limit');

    const teams = await caller(cp, 'region-teams@example.com', 'teams');
    const teamsConnection = await insertConnection(cp, teams);
    const allowed = await cp.request('POST', '/v1/databases', {
      token: teams.token,
      body: { name: 'us', connectionId: teamsConnection, sourceSchema: 'app', region: 'us-east-1' },
    });
    expect(allowed.status).toBe(201);
  });

  it('poll interval: below the plan minimum is 400 validation_failed, on create and update', async () => {
    const me = await caller(cp, 'poll@example.com');
    const connectionId = await insertConnection(cp, me);
    const base = { connectionId, sourceSchema: 'app', syncMode: 'poll' };
    const fast = await cp.request('POST', '/v1/databases', {
      token: me.token,
      body: { ...base, name: 'fast', syncInterval: 30 },
    });
    expect(fast.status).toBe(400);
    expect(fast.body).toEqual({
      error: 'validation_failed',
      message: 'body.syncInterval must be at least 60 seconds in poll mode on the free plan.',
    });
    const slow = await cp.request('POST', '/v1/databases', {
      token: me.token,
      body: { ...base, name: 'slow' },
    });
    expect(slow.status).toBe(201);
    expect(slow.body.syncInterval).toBe(60);
    const faster = await cp.request('PATCH', `/v1/databases/${slow.body.id}`, {
      token: me.token,
      body: { syncInterval: 59 },
    });
    expect(faster.status).toBe(400);
    expect(faster.body.message).toContain('at least 60 seconds');
    // A schema config's own interval below the floor is refused by name, not raised in silence.
    const configured = await cp.request('POST', '/v1/databases', {
      token: me.token,
      body: {
        connectionId,
        sourceSchema: 'app',
        name: 'configured',
        schemaConfig: { sync: { mode: 'poll', interval: 2 } },
      },
    });
    expect(configured.status).toBe(400);
    expect(configured.body).toEqual({
      error: 'validation_failed',
      message:
        'body.schemaConfig.sync.interval is 2 seconds, but poll mode on the free plan syncs at most every 60 seconds: give 60 or more (in the config or as syncInterval), or use CDC.',
    });
  });

  it('overage lifts the compute-unit limit by what the spending cap pays for', async () => {
    const me = await caller(cp, 'overage-units@example.com', 'teams'); // 32 units
    for (let i = 0; i < 3; i++)
      await insertDatabase(cp, me, { status: 'running', instanceSize: 'l' });
    await insertDatabase(cp, me, { status: 'deploying', instanceSize: 'm' }); // 28 in use
    const draft = await insertDatabase(cp, me, { status: 'draft', instanceSize: 'l' });
    const refused = await action(me, draft.id, 'provision');
    expect(refused.status).toBe(403);
    expect(refused.body.message).toContain('raise your overage spending cap');

    // A renewal payment, as the payment provider reports it, makes overage possible.
    await cp.context.db
      .insertInto('billing_accounts')
      .values({ account_id: me.accountId, provider: 'local', renewal_payments: 1 })
      .execute();
    const small = await cp.request('POST', '/v1/billing/overage', {
      token: me.token,
      body: { enabled: true, spendingCapCents: 3_000 },
    });
    expect(small.status).toBe(200);
    const still = await action(me, draft.id, 'provision');
    expect(still.body.message).toContain('the teams plan allows 32 (35 with your overage cap)');
    await cp.request('POST', '/v1/billing/overage', {
      token: me.token,
      body: { enabled: true, spendingCapCents: 4_000 },
    });
    expect((await action(me, draft.id, 'provision')).status).toBe(202);
  });
});

describe('a control plane with REPLIX_MIN_POLL_INTERVAL (what replix start sets)', () => {
  let cp: TestControlPlane;

  beforeAll(async () => {
    cp = await startTestControlPlane('pglite', { env: { REPLIX_MIN_POLL_INTERVAL: '1' } });
  });
  afterAll(() => cp?.close());

  it('has no plan floor: a free account polls every 2 s as its config says, and its limits show 1', async () => {
    const me = await caller(cp, 'local-poll@example.com');
    const connectionId = await insertConnection(cp, me);
    const created = await cp.request('POST', '/v1/databases', {
      token: me.token,
      body: {
        connectionId,
        sourceSchema: 'app',
        name: 'local',
        schemaConfig: { sync: { mode: 'poll', interval: 2 } },
      },
    });
    expect(created.status).toBe(201);
    expect(created.body).toMatchObject({ syncMode: 'poll', syncInterval: 2 });
    const account = await cp.request('GET', '/v1/account', { token: me.token });
    expect(account.body.plan).toBe('free');
    expect(account.body.limits.pollModeMinSyncInterval).toBe(1);
    const billing = await cp.request('GET', '/v1/billing', { token: me.token });
    expect(billing.body.limits.pollModeMinSyncInterval).toBe(1);
    const status = await cp.request('GET', `/v1/databases/${created.body.id}/instance`, {
      token: me.token,
    });
    expect(status.body.connection.minSyncInterval).toBe(1);
  });
});
