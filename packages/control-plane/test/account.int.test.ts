import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import {
  STORE_KINDS,
  startTestControlPlane,
  type TestControlPlane,
} from './control-plane-harness.ts';
import { caller, insertDatabase } from './lifecycle-fixtures.ts';

describe.each(STORE_KINDS)('the account on the %s store', (kind) => {
  let cp: TestControlPlane;

  beforeAll(async () => {
    cp = await startTestControlPlane(kind, { env: { REPLIX_TOS_VERSION: '2026-03-01' } });
  });
  afterAll(() => cp?.close());

  it('GET /v1/account: plan, the caller, terms, limits and usage', async () => {
    const me = await caller(cp, 'account@example.com', 'pro');
    await insertDatabase(cp, me, { status: 'running', instanceSize: 's' });
    await insertDatabase(cp, me, { status: 'paused', instanceSize: 'm' });
    const response = await cp.request('GET', '/v1/account', { token: me.token });
    expect(response.status).toBe(200);
    expect(response.body).toEqual({
      id: me.accountId,
      email: 'account@example.com',
      createdAt: expect.any(String),
      plan: 'pro',
      user: { id: expect.any(String), email: 'account@example.com', role: 'owner', admin: false },
      tosAcceptedVersion: null,
      tosAcceptedAt: null,
      currentTosVersion: '2026-03-01',
      tosAccepted: false,
      limits: {
        databases: 10,
        computeUnits: 8,
        maxInstanceSize: 'm',
        maxReplicas: 2,
        pollModeMinSyncInterval: 30,
        dataTransferGBPerMonth: 50,
        multiRegion: false,
        overageAllowed: false,
        overageMaxCents: 0,
      },
      // The paused database uses no compute.
      usage: { databases: 2, computeUnits: 2 },
    });
    expect((await cp.request('GET', '/v1/account')).status).toBe(401);
  });

  it('accept-tos records the current version by default, once, with an audit event', async () => {
    const me = await caller(cp, 'terms@example.com');
    const accepted = await cp.request('POST', '/v1/account/accept-tos', { token: me.token });
    expect(accepted.status).toBe(200);
    expect(accepted.body).toEqual({ ok: true, version: '2026-03-01' });
    // The web app calls it on every first login: a repeat answers the same and records nothing.
    const again = await cp.request('POST', '/v1/account/accept-tos', {
      token: me.token,
      body: {},
    });
    expect(again.body).toEqual({ ok: true, version: '2026-03-01' });

    const account = (await cp.request('GET', '/v1/account', { token: me.token })).body;
    expect(account).toMatchObject({
      tosAcceptedVersion: '2026-03-01',
      tosAccepted: true,
      currentTosVersion: '2026-03-01',
    });
    expect(Date.parse(account.tosAcceptedAt)).toBeGreaterThan(Date.now() - 60_000);

    const events = (
      await cp.request('GET', '/v1/account/audit-log?eventType=account.tos_accepted', {
        token: me.token,
      })
    ).body;
    expect(events.total).toBe(1);
    expect(events.events[0]).toMatchObject({
      entityType: 'user',
      entityId: account.user.id,
      payload: { version: '2026-03-01', current: true },
    });
  });

  it('accept-tos takes an explicit version, per user', async () => {
    const me = await caller(cp, 'terms-old@example.com');
    const other = await caller(cp, 'terms-other@example.com');
    const old = await cp.request('POST', '/v1/account/accept-tos', {
      token: me.token,
      body: { version: '2025-06-01' },
    });
    expect(old.body).toEqual({ ok: true, version: '2025-06-01' });
    const mine = (await cp.request('GET', '/v1/account', { token: me.token })).body;
    expect(mine).toMatchObject({ tosAcceptedVersion: '2025-06-01', tosAccepted: false });
    const theirs = (await cp.request('GET', '/v1/account', { token: other.token })).body;
    expect(theirs).toMatchObject({ tosAcceptedVersion: null, tosAccepted: false });
  });

  it('accept-tos validates the version', async () => {
    const me = await caller(cp, 'terms-bad@example.com');
    for (const body of [{ version: '' }, { version: '../etc' }, { version: 'a b' }, { other: 1 }]) {
      const response = await cp.request('POST', '/v1/account/accept-tos', {
        token: me.token,
        body,
      });
      expect(response.status, JSON.stringify(body)).toBe(400);
      expect(response.body.error).toBe('validation_failed');
    }
    expect((await cp.request('POST', '/v1/account/accept-tos', {})).status).toBe(401);
  });
});
