import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import {
  POSTGRES_STORE,
  startTestControlPlane,
  type TestControlPlane,
} from './control-plane-harness.ts';
import { type Caller, caller } from './lifecycle-fixtures.ts';

/** Submits a local billing page's form the way a browser does. */
async function submit(url: string, action: string) {
  const response = await fetch(url, {
    method: 'POST',
    headers: { 'content-type': 'application/x-www-form-urlencoded' },
    body: new URLSearchParams({ action }).toString(),
  });
  return { status: response.status, html: await response.text() };
}

async function accountEvents(cp: TestControlPlane, who: Caller, eventType: string) {
  const response = await cp.request('GET', `/v1/account/audit-log?eventType=${eventType}`, {
    token: who.token,
  });
  expect(response.status).toBe(200);
  return response.body.events as Array<{ eventType: string; payload: Record<string, unknown> }>;
}

describe.each(POSTGRES_STORE)('billing with the local provider on the %s store', (kind) => {
  let cp: TestControlPlane;

  beforeAll(async () => {
    cp = await startTestControlPlane(kind);
  });
  afterAll(() => cp?.close());

  it('checkout: the URL leads to a page whose Pay button changes the plan', async () => {
    const me = await caller(cp, 'checkout@example.com');
    const checkout = await cp.request('POST', '/v1/billing/checkout', {
      token: me.token,
      body: { plan: 'teams' },
    });
    expect(checkout.status).toBe(200);
    expect(checkout.body.url).toMatch(
      new RegExp(`^${cp.url}/billing/local-checkout/[A-Za-z0-9_-]{43}$`),
    );

    const page = await fetch(checkout.body.url);
    expect(page.status).toBe(200);
    expect(page.headers.get('content-type')).toMatch(/^text\/html/);
    const html = await page.text();
    expect(html).toContain('Subscribe to teams');
    expect(html).toContain('checkout@example.com');
    expect(html).toContain('value="pay"');

    // Still free until paid.
    expect((await cp.request('GET', '/v1/billing', { token: me.token })).body.plan).toBe('free');
    const paid = await submit(checkout.body.url, 'pay');
    expect(paid.status).toBe(200);
    expect(paid.html).toContain('Your plan is now <strong>teams</strong>');
    expect(paid.html).toContain('<a href="/billing">Back to billing in the dashboard</a>');

    const billing = await cp.request('GET', '/v1/billing', { token: me.token });
    expect(billing.status).toBe(200);
    expect(billing.body).toMatchObject({
      plan: 'teams',
      provider: 'local',
      checkoutPlans: ['pro', 'teams', 'business'],
      subscription: { status: 'active', plan: 'teams', renewalPayments: 0, lastRenewalAt: null },
      overage: {
        enabled: false,
        spendingCapCents: null,
        eligible: false,
        maxSpendingCapCents: 50_000,
        centsPerComputeUnitMonth: 1000,
        computeUnitsAllowed: 32,
      },
      limits: { databases: 25, computeUnits: 32, maxInstanceSize: 'l', multiRegion: true },
      usage: { databases: 0, computeUnits: 0 },
    });
    expect(billing.body.overage.reason).toContain('renewal payment');
    // Every plan, to compare: the current one's entry matches its limits.
    expect(billing.body.plans.map((plan: { name: string }) => plan.name)).toEqual([
      'free',
      'pro',
      'teams',
      'business',
      'enterprise',
    ]);
    expect(billing.body.plans[2].limits).toEqual(billing.body.limits);
    expect(billing.body.plans[0].limits).toMatchObject({ databases: 3, maxInstanceSize: 's' });

    // The page is used up: a second Pay changes nothing.
    expect((await submit(checkout.body.url, 'pay')).status).toBe(409);
    expect((await fetch(checkout.body.url)).status).toBe(409);

    expect(await accountEvents(cp, me, 'billing.checkout_started')).toMatchObject([
      { payload: { plan: 'teams', provider: 'local' } },
    ]);
    expect(await accountEvents(cp, me, 'billing.subscription_started')).toHaveLength(1);
    expect(await accountEvents(cp, me, 'account.plan_changed')).toMatchObject([
      { payload: { fromPlan: 'free', toPlan: 'teams', source: 'checkout', provider: 'local' } },
    ]);
  });

  it('cancelling the checkout page changes nothing', async () => {
    const me = await caller(cp, 'cancel@example.com');
    const { body } = await cp.request('POST', '/v1/billing/checkout', {
      token: me.token,
      body: { plan: 'pro' },
    });
    const cancelled = await submit(body.url, 'cancel');
    expect(cancelled.status).toBe(200);
    expect(cancelled.html).toContain('Checkout cancelled');
    expect((await cp.request('GET', '/v1/billing', { token: me.token })).body.plan).toBe('free');
    expect((await submit(body.url, 'pay')).status).toBe(409);
  });

  it('an unknown or forged page token is 404, and no token opens another page', async () => {
    expect((await fetch(`${cp.url}/billing/local-checkout/${'A'.repeat(43)}`)).status).toBe(404);
    expect((await submit(`${cp.url}/billing/local-checkout/nope`, 'pay')).status).toBe(404);
    expect((await fetch(`${cp.url}/billing/local-portal/${'A'.repeat(43)}`)).status).toBe(404);
  });

  it('an expired checkout page can no longer be paid', async () => {
    const me = await caller(cp, 'expired@example.com');
    const { body } = await cp.request('POST', '/v1/billing/checkout', {
      token: me.token,
      body: { plan: 'pro' },
    });
    await cp.context.db
      .updateTable('billing_sessions')
      .set({ expires_at: new Date(Date.now() - 1000) })
      .where('account_id', '=', me.accountId)
      .execute();
    expect((await fetch(body.url)).status).toBe(410);
    expect((await submit(body.url, 'pay')).status).toBe(410);
    expect((await cp.request('GET', '/v1/billing', { token: me.token })).body.plan).toBe('free');
  });

  it('checkout validates the plan: enterprise is sales-led and free is a downgrade', async () => {
    const me = await caller(cp, 'plans@example.com');
    for (const plan of ['enterprise', 'free', 'gold']) {
      const response = await cp.request('POST', '/v1/billing/checkout', {
        token: me.token,
        body: { plan },
      });
      expect(response.status).toBe(400);
      expect(response.body).toEqual({
        error: 'validation_failed',
        message: 'body.plan must be one of "pro", "teams", "business".',
      });
    }
    const missing = await cp.request('POST', '/v1/billing/checkout', { token: me.token, body: {} });
    expect(missing.body).toEqual({
      error: 'validation_failed',
      message: 'body.plan is required.',
    });
    expect(
      (await cp.request('POST', '/v1/billing/checkout', { body: { plan: 'pro' } })).status,
    ).toBe(401);
  });

  it('with an active subscription, checkout leads to the billing portal (renewals, cancel)', async () => {
    const me = await caller(cp, 'portal@example.com');
    const first = await cp.request('POST', '/v1/billing/checkout', {
      token: me.token,
      body: { plan: 'teams' },
    });
    await submit(first.body.url, 'pay');

    const again = await cp.request('POST', '/v1/billing/checkout', {
      token: me.token,
      body: { plan: 'business' },
    });
    expect(again.status).toBe(200);
    expect(again.body.url).toMatch(new RegExp(`^${cp.url}/billing/local-portal/`));
    const portal = await fetch(again.body.url);
    expect(portal.status).toBe(200);
    const html = await portal.text();
    expect(html).toContain('plan <strong>teams</strong>');
    expect(html).toContain('renewal payments: 0');

    const renewed = await submit(again.body.url, 'renew');
    expect(renewed.status).toBe(200);
    expect(renewed.html).toContain('A renewal payment was recorded.');
    const billing = (await cp.request('GET', '/v1/billing', { token: me.token })).body;
    expect(billing.subscription.renewalPayments).toBe(1);
    expect(billing.subscription.lastRenewalAt).toEqual(expect.any(String));
    expect(billing.overage).toMatchObject({ eligible: true, reason: null });
    expect(await accountEvents(cp, me, 'billing.renewal_paid')).toMatchObject([
      { payload: { renewalPayments: 1, provider: 'local' } },
    ]);

    const cancelled = await submit(again.body.url, 'cancel');
    expect(cancelled.status).toBe(200);
    const after = (await cp.request('GET', '/v1/billing', { token: me.token })).body;
    expect(after).toMatchObject({ plan: 'free', subscription: { status: 'canceled' } });
    expect((await submit(again.body.url, 'renew')).status).toBe(409);
    // No subscription any more: checkout is a checkout again.
    const next = await cp.request('POST', '/v1/billing/checkout', {
      token: me.token,
      body: { plan: 'pro' },
    });
    expect(next.body.url).toContain('/billing/local-checkout/');
  });

  describe('overage (spec §4.1 rule 1)', () => {
    async function subscribedTeams(email: string, renewals: number): Promise<Caller> {
      const me = await caller(cp, email);
      const { body } = await cp.request('POST', '/v1/billing/checkout', {
        token: me.token,
        body: { plan: 'teams' },
      });
      await submit(body.url, 'pay');
      if (renewals > 0) {
        const portal = await cp.request('POST', '/v1/billing/checkout', {
          token: me.token,
          body: { plan: 'teams' },
        });
        for (let i = 0; i < renewals; i++) await submit(portal.body.url, 'renew');
      }
      return me;
    }

    const overage = (who: Caller, body: unknown) =>
      cp.request('POST', '/v1/billing/overage', { token: who.token, body });

    it('needs Teams or above: 403 plan_limit on free and pro', async () => {
      const free = await caller(cp, 'overage-free@example.com');
      const pro = await caller(cp, 'overage-pro@example.com', 'pro');
      for (const who of [free, pro]) {
        const response = await overage(who, { enabled: true, spendingCapCents: 100 });
        expect(response.status).toBe(403);
        expect(response.body).toEqual({
          error: 'plan_limit',
          message: expect.stringContaining('Overage needs the Teams plan or above'),
        });
      }
    });

    it('needs a successful renewal payment: 403 plan_limit before the first', async () => {
      const me = await subscribedTeams('overage-new@example.com', 0);
      const response = await overage(me, { enabled: true, spendingCapCents: 100 });
      expect(response.status).toBe(403);
      expect(response.body).toEqual({
        error: 'plan_limit',
        message:
          'Overage needs at least one successful renewal payment of your subscription; it has had none yet.',
      });
      // An admin-set Teams plan has no renewal payment either.
      const admin = await caller(cp, 'overage-admin-set@example.com', 'business');
      expect((await overage(admin, { enabled: true, spendingCapCents: 100 })).status).toBe(403);
    });

    it('validates the cap: required when enabling, at least 1, at most the tier maximum', async () => {
      const me = await subscribedTeams('overage-cap@example.com', 1);
      expect((await overage(me, { enabled: true })).body).toEqual({
        error: 'validation_failed',
        message: 'body.spendingCapCents is required when enabled is true.',
      });
      const zero = await overage(me, { enabled: true, spendingCapCents: 0 });
      expect(zero.status).toBe(400);
      expect(zero.body.error).toBe('validation_failed');
      expect(zero.body.message).toContain('body.spendingCapCents');
      expect((await overage(me, { enabled: true, spendingCapCents: 1.5 })).status).toBe(400);
      expect((await overage(me, { spendingCapCents: 5 })).body).toEqual({
        error: 'validation_failed',
        message: 'body.enabled is required.',
      });
      expect((await overage(me, { enabled: true, spendingCapCents: 50_001 })).body).toEqual({
        error: 'validation_failed',
        message: "body.spendingCapCents must be at most 50000 (the teams plan's maximum).",
      });
    });

    it('turns on with a cap (raising the compute units allowed) and off again', async () => {
      const me = await subscribedTeams('overage-on@example.com', 1);
      const on = await overage(me, { enabled: true, spendingCapCents: 50_000 });
      expect(on.status).toBe(200);
      expect(on.body).toEqual({ ok: true, overageEnabled: true, spendingCapCents: 50_000 });
      const billing = (await cp.request('GET', '/v1/billing', { token: me.token })).body;
      expect(billing.overage).toMatchObject({
        enabled: true,
        spendingCapCents: 50_000,
        computeUnitsAllowed: 32 + 50,
      });
      const off = await overage(me, { enabled: false });
      expect(off.body).toEqual({ ok: true, overageEnabled: false, spendingCapCents: null });
      expect(await accountEvents(cp, me, 'billing.overage_updated')).toMatchObject([
        { payload: { overageEnabled: false, spendingCapCents: null } },
        { payload: { overageEnabled: true, spendingCapCents: 50_000 } },
      ]);
    });

    it('turning off is always allowed; a downgrade turns overage off', async () => {
      const free = await caller(cp, 'overage-off@example.com');
      expect((await overage(free, { enabled: false })).body).toEqual({
        ok: true,
        overageEnabled: false,
        spendingCapCents: null,
      });
      const me = await subscribedTeams('overage-downgrade@example.com', 1);
      await overage(me, { enabled: true, spendingCapCents: 1000 });
      const admin = await cp.token('ops@example.com', { admin: true });
      await cp.request('PATCH', `/v1/admin/customers/${me.accountId}/plan`, {
        token: admin,
        body: { plan: 'pro' },
      });
      const billing = (await cp.request('GET', '/v1/billing', { token: me.token })).body;
      expect(billing.overage).toMatchObject({ enabled: false, spendingCapCents: null });
    });
  });
});
