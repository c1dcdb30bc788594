import { randomUUID } from 'node:crypto';
import { createServer, type Server } from 'node:http';
import type { AddressInfo } from 'node:net';
import Stripe from 'stripe';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import {
  POSTGRES_STORE,
  startTestControlPlane,
  type TestControlPlane,
} from './control-plane-harness.ts';
import { caller } from './lifecycle-fixtures.ts';

const WEBHOOK_SECRET = 'whsec_test_replix';
const PRICES = { pro: 'price_pro_1', teams: 'price_teams_1', business: 'price_business_1' };

interface StripeCall {
  readonly method: string;
  readonly path: string;
  readonly form: URLSearchParams;
  readonly authorization: string | undefined;
}

/**
 * Stripe cannot be reached from here: a local HTTP server that answers the three endpoints the
 * provider calls, as Stripe does (form-encoded requests, JSON objects back), and records them.
 */
async function startFakeStripe(): Promise<{
  server: Server;
  base: string;
  calls: StripeCall[];
}> {
  const calls: StripeCall[] = [];
  const server = createServer((request, response) => {
    let body = '';
    request.on('data', (chunk) => {
      body += chunk;
    });
    request.on('end', () => {
      const form = new URLSearchParams(body);
      const path = (request.url ?? '').split('?')[0] as string;
      calls.push({
        method: request.method ?? '',
        path,
        form,
        authorization: request.headers.authorization,
      });
      const reply = (status: number, object: unknown) => {
        response.writeHead(status, { 'content-type': 'application/json', 'request-id': 'req_1' });
        response.end(JSON.stringify(object));
      };
      if (request.method === 'POST' && path === '/v1/customers') {
        return reply(200, { id: `cus_${randomUUID().slice(0, 8)}`, object: 'customer' });
      }
      if (request.method === 'POST' && path === '/v1/checkout/sessions') {
        const id = `cs_test_${randomUUID().slice(0, 8)}`;
        return reply(200, {
          id,
          object: 'checkout.session',
          url: `https://checkout.stripe.test/c/pay/${id}`,
        });
      }
      if (request.method === 'POST' && path === '/v1/billing_portal/sessions') {
        return reply(200, {
          id: 'bps_1',
          object: 'billing_portal.session',
          url: 'https://billing.stripe.test/p/session/bps_1',
        });
      }
      reply(404, { error: { type: 'invalid_request_error', message: 'Unrecognized request URL' } });
    });
  });
  await new Promise<void>((resolve) => server.listen(0, '127.0.0.1', resolve));
  const { port } = server.address() as AddressInfo;
  return { server, base: `http://127.0.0.1:${port}`, calls };
}

/** A Stripe event as Stripe posts it, signed like Stripe signs it. */
function signedEvent(type: string, object: Record<string, unknown>, secret = WEBHOOK_SECRET) {
  const payload = JSON.stringify({
    id: `evt_${randomUUID().replaceAll('-', '')}`,
    object: 'event',
    api_version: Stripe.API_VERSION,
    created: Math.floor(Date.now() / 1000),
    type,
    data: { object },
  });
  const signature = Stripe.webhooks.generateTestHeaderString({ payload, secret });
  return { payload, signature };
}

describe.each(POSTGRES_STORE)('billing with the Stripe provider on the %s store', (kind) => {
  let cp: TestControlPlane;
  let stripe: Awaited<ReturnType<typeof startFakeStripe>>;

  beforeAll(async () => {
    stripe = await startFakeStripe();
    cp = await startTestControlPlane(kind, {
      env: {
        REPLIX_BILLING_PROVIDER: 'stripe',
        STRIPE_SECRET_KEY: 'sk_test_replix',
        STRIPE_WEBHOOK_SECRET: WEBHOOK_SECRET,
        STRIPE_PRICE_PRO: PRICES.pro,
        STRIPE_PRICE_TEAMS: PRICES.teams,
        STRIPE_PRICE_BUSINESS: PRICES.business,
        STRIPE_API_BASE: stripe.base,
        REPLIX_BILLING_RETURN_URL: 'https://app.example.com/billing',
      },
    });
  });
  afterAll(async () => {
    await cp?.close();
    await new Promise((resolve) => stripe?.server.close(resolve));
  });

  function deliver(event: { payload: string; signature?: string }) {
    return cp.request('POST', '/v1/billing/webhooks/stripe', {
      body: event.payload,
      headers: {
        'content-type': 'application/json; charset=utf-8',
        ...(event.signature ? { 'stripe-signature': event.signature } : {}),
      },
    });
  }

  it('checkout makes a customer and a subscription-mode Checkout Session with the plan price', async () => {
    const me = await caller(cp, 'stripe-checkout@example.com');
    stripe.calls.length = 0;
    const response = await cp.request('POST', '/v1/billing/checkout', {
      token: me.token,
      body: { plan: 'teams' },
    });
    expect(response.status).toBe(200);
    expect(response.body.url).toMatch(/^https:\/\/checkout\.stripe\.test\/c\/pay\/cs_test_/);
    expect(stripe.calls.map((call) => `${call.method} ${call.path}`)).toEqual([
      'POST /v1/customers',
      'POST /v1/checkout/sessions',
    ]);
    const [customer, session] = stripe.calls as [StripeCall, StripeCall];
    expect(customer.authorization).toBe('Bearer sk_test_replix');
    expect(customer.form.get('email')).toBe('stripe-checkout@example.com');
    expect(customer.form.get('metadata[accountId]')).toBe(me.accountId);
    expect(Object.fromEntries(session.form)).toMatchObject({
      mode: 'subscription',
      client_reference_id: me.accountId,
      'line_items[0][price]': PRICES.teams,
      'line_items[0][quantity]': '1',
      'metadata[plan]': 'teams',
      'subscription_data[metadata][accountId]': me.accountId,
      success_url: 'https://app.example.com/billing?checkout=success',
      cancel_url: 'https://app.example.com/billing?checkout=cancelled',
    });
    expect(session.form.get('customer')).toMatch(/^cus_/);

    // A second checkout reuses the customer.
    stripe.calls.length = 0;
    await cp.request('POST', '/v1/billing/checkout', { token: me.token, body: { plan: 'pro' } });
    expect(stripe.calls.map((call) => call.path)).toEqual(['/v1/checkout/sessions']);
    expect(stripe.calls[0]?.form.get('customer')).toBe(session.form.get('customer'));
  });

  it('webhooks: a completed checkout sets the plan; a renewal counts; a deletion goes back to free', async () => {
    const me = await caller(cp, 'stripe-hooks@example.com');
    await cp.request('POST', '/v1/billing/checkout', {
      token: me.token,
      body: { plan: 'business' },
    });
    const customerId = (
      await cp.context.db
        .selectFrom('billing_accounts')
        .select('customer_id')
        .where('account_id', '=', me.accountId)
        .executeTakeFirstOrThrow()
    ).customer_id;

    const completed = signedEvent('checkout.session.completed', {
      id: 'cs_test_1',
      object: 'checkout.session',
      client_reference_id: me.accountId,
      customer: customerId,
      subscription: 'sub_1',
      metadata: { accountId: me.accountId, plan: 'business' },
    });
    const delivered = await deliver(completed);
    expect(delivered.status).toBe(200);
    expect(delivered.body).toEqual({ received: true });
    let billing = (await cp.request('GET', '/v1/billing', { token: me.token })).body;
    expect(billing).toMatchObject({
      plan: 'business',
      provider: 'stripe',
      subscription: { status: 'active', plan: 'business', renewalPayments: 0 },
    });

    // The first invoice of a subscription is not a renewal.
    const invoice = (reason: string) =>
      signedEvent('invoice.paid', {
        id: `in_${randomUUID().slice(0, 8)}`,
        object: 'invoice',
        customer: customerId,
        billing_reason: reason,
        parent: { type: 'subscription_details', subscription_details: { subscription: 'sub_1' } },
      });
    expect((await deliver(invoice('subscription_create'))).status).toBe(200);
    const renewal = invoice('subscription_cycle');
    expect((await deliver(renewal)).status).toBe(200);
    // Stripe redelivers until it sees a 2xx: the same event counts once.
    expect((await deliver(renewal)).status).toBe(200);
    billing = (await cp.request('GET', '/v1/billing', { token: me.token })).body;
    expect(billing.subscription.renewalPayments).toBe(1);
    expect(billing.overage.eligible).toBe(true);
    const overage = await cp.request('POST', '/v1/billing/overage', {
      token: me.token,
      body: { enabled: true, spendingCapCents: 500_000 },
    });
    expect(overage.body).toEqual({ ok: true, overageEnabled: true, spendingCapCents: 500_000 });

    // With the subscription active, checkout opens the Billing Portal.
    stripe.calls.length = 0;
    const portal = await cp.request('POST', '/v1/billing/checkout', {
      token: me.token,
      body: { plan: 'teams' },
    });
    expect(portal.body).toEqual({ url: 'https://billing.stripe.test/p/session/bps_1' });
    expect(stripe.calls.map((call) => call.path)).toEqual(['/v1/billing_portal/sessions']);
    expect(stripe.calls[0]?.form.get('customer')).toBe(customerId);
    expect(stripe.calls[0]?.form.get('return_url')).toBe('https://app.example.com/billing');

    // A plan change made in the portal moves the account to the new price's plan; a price we
    // do not sell changes nothing.
    const changed = (priceId: string) =>
      signedEvent('customer.subscription.updated', {
        id: 'sub_1',
        object: 'subscription',
        customer: customerId,
        status: 'active',
        items: { object: 'list', data: [{ id: 'si_1', price: { id: priceId } }] },
      });
    expect((await deliver(changed('price_somebody_else'))).status).toBe(200);
    expect((await cp.request('GET', '/v1/billing', { token: me.token })).body.plan).toBe(
      'business',
    );
    expect((await deliver(changed(PRICES.teams))).status).toBe(200);
    billing = (await cp.request('GET', '/v1/billing', { token: me.token })).body;
    expect(billing).toMatchObject({
      plan: 'teams',
      subscription: { status: 'active', plan: 'teams' },
    });

    // Events the control plane does not act on are acknowledged.
    expect((await deliver(signedEvent('customer.updated', { id: customerId }))).status).toBe(200);

    const deleted = signedEvent('customer.subscription.deleted', {
      id: 'sub_1',
      object: 'subscription',
      customer: customerId,
    });
    expect((await deliver(deleted)).status).toBe(200);
    billing = (await cp.request('GET', '/v1/billing', { token: me.token })).body;
    expect(billing).toMatchObject({
      plan: 'free',
      subscription: { status: 'canceled' },
      overage: { enabled: false, spendingCapCents: null },
    });

    const types = (
      await cp.request('GET', '/v1/account/audit-log?limit=100', { token: me.token })
    ).body.events.map((event: { eventType: string }) => event.eventType);
    expect(types).toEqual([
      'account.plan_changed',
      'billing.subscription_ended',
      'account.plan_changed',
      'billing.subscription_changed',
      'billing.overage_updated',
      'billing.renewal_paid',
      'account.plan_changed',
      'billing.subscription_started',
      'billing.checkout_started',
    ]);
  });

  it('rejects a webhook with a wrong, missing or stale signature, and changes nothing', async () => {
    const me = await caller(cp, 'stripe-forged@example.com');
    const forged = signedEvent(
      'checkout.session.completed',
      { id: 'cs_x', client_reference_id: me.accountId, metadata: { plan: 'enterprise' } },
      'whsec_not_the_secret',
    );
    const wrong = await deliver(forged);
    expect(wrong.status).toBe(400);
    expect(wrong.body).toEqual({
      error: 'invalid_signature',
      message:
        'The Stripe-Signature header does not verify against the endpoint secret, or is too old.',
    });
    const missing = await deliver({ payload: forged.payload });
    expect(missing.body).toEqual({
      error: 'invalid_signature',
      message: 'The Stripe-Signature header is missing.',
    });
    // A valid signature over different bytes (the body was altered in transit).
    const good = signedEvent('checkout.session.completed', {
      id: 'cs_y',
      client_reference_id: me.accountId,
      metadata: { plan: 'enterprise' },
    });
    const altered = await deliver({
      payload: good.payload.replace('enterprise', 'business'),
      signature: good.signature,
    });
    expect(altered.status).toBe(400);
    const payload = JSON.stringify({
      id: 'evt_old',
      type: 'customer.updated',
      data: { object: {} },
    });
    const stale = Stripe.webhooks.generateTestHeaderString({
      payload,
      secret: WEBHOOK_SECRET,
      timestamp: Math.floor(Date.now() / 1000) - 3600,
    });
    expect((await deliver({ payload, signature: stale })).status).toBe(400);
    expect((await cp.request('GET', '/v1/billing', { token: me.token })).body.plan).toBe('free');
  });

  it('a provider that does not answer is 502 payment_provider_unavailable', async () => {
    const me = await caller(cp, 'stripe-down@example.com');
    await new Promise((resolve) => stripe.server.close(resolve));
    stripe.server.closeAllConnections();
    const response = await cp.request('POST', '/v1/billing/checkout', {
      token: me.token,
      body: { plan: 'pro' },
    });
    expect(response.status).toBe(502);
    expect(response.body).toEqual({
      error: 'payment_provider_unavailable',
      message: 'The payment provider did not answer; nothing changed. Try again in a moment.',
    });
    // Up again for the next store kind's run.
    const { port } = new URL(stripe.base);
    await new Promise<void>((resolve) => stripe.server.listen(Number(port), '127.0.0.1', resolve));
  });
});

describe('the Stripe provider configuration', () => {
  it('needs every Stripe setting', async () => {
    const { resolveBillingConfig } = await import('../src/application/payments/billing-config.ts');
    expect(() => resolveBillingConfig({ REPLIX_BILLING_PROVIDER: 'stripe' })).toThrow(
      'STRIPE_SECRET_KEY is required with REPLIX_BILLING_PROVIDER=stripe.',
    );
    expect(() => resolveBillingConfig({ REPLIX_BILLING_PROVIDER: 'paypal' })).toThrow(
      'REPLIX_BILLING_PROVIDER must be one of local, stripe.',
    );
    expect(resolveBillingConfig({})).toMatchObject({
      provider: 'local',
      stripe: undefined,
      termsVersion: '2026-01-01',
    });
  });
});
