import { Buffer } from 'node:buffer';
import type { FastifyRequest } from 'fastify';
import { createPaymentProvider } from '../../application/payments/create-payment-provider.ts';
import {
  Billing,
  CheckoutBody,
  CheckoutUrl,
  OverageBody,
  OverageSettings,
  WebhookReceived,
} from '../../application/resources/billing/billing-schemas.ts';
import {
  type BillingDeps,
  billingOverview,
  receiveProviderEvent,
  setOverage,
  startCheckout,
} from '../../application/resources/billing/billing-service.ts';
import { ErrorResponse, errorResponses } from '../../application/resources/common-schemas.ts';
import type { ApiServer } from '../api-server.ts';
import type { ApiContext } from '../context.ts';

const tags = ['billing'];

/** The control plane's own address, for local pages and the default return address. */
function originOf(context: ApiContext, request: FastifyRequest): string {
  return context.config.publicUrl ?? `${request.protocol}://${request.host}`;
}

/** Plans and payments: the dashboard's billing page, checkout, overage, provider webhooks. */
export function registerBillingRoutes(app: ApiServer, context: ApiContext): void {
  const { db, log } = context;
  const provider = createPaymentProvider(context.config.billing, db);
  const billing: BillingDeps = {
    db,
    provider,
    log,
    minPollInterval: context.config.minPollInterval,
  };

  app.get(
    '/billing',
    {
      schema: {
        tags,
        summary: "The account's plan, subscription, overage settings, limits and usage",
        response: { 200: Billing, ...errorResponses() },
      },
    },
    async (request) => billingOverview(billing, request.principal.accountId),
  );

  app.post(
    '/billing/checkout',
    {
      schema: {
        tags,
        summary: 'Start a checkout for a plan (or open the billing portal when subscribed)',
        description:
          'Answers the URL of a hosted checkout page for a subscription to `plan`; the plan changes when the payment completes (Stripe: its `checkout.session.completed` webhook; local provider: the page’s Pay button). With an active subscription, answers the billing portal’s URL instead, where the plan is changed or cancelled (spec §4.1).',
        body: CheckoutBody,
        response: { 200: CheckoutUrl, 502: ErrorResponse, ...errorResponses() },
      },
    },
    async (request) =>
      startCheckout(
        billing,
        request.principal.accountId,
        request.body.plan,
        originOf(context, request),
      ),
  );

  app.post(
    '/billing/overage',
    {
      schema: {
        tags,
        summary: 'Turn overage on (with a monthly spending cap) or off',
        description:
          'Overage lets the account run more compute units than its plan includes: as many more as the spending cap pays for at `centsPerComputeUnitMonth` (GET /v1/billing). Turning it on needs the Teams plan or above and at least one successful renewal payment (403 `plan_limit`), and `spendingCapCents` (400 when missing or above the plan’s `overageMaxCents`) (spec §4.1 rule 1). Turning it off is always allowed and clears the cap.',
        body: OverageBody,
        response: { 200: OverageSettings, 403: ErrorResponse, ...errorResponses() },
      },
    },
    async (request) => setOverage(billing, request.principal.accountId, request.body),
  );

  // Stripe signs the exact bytes it sends: this route reads the body raw, so it sits in a
  // context of its own with a JSON parser that keeps the bytes.
  app.register(async (hooks) => {
    hooks.removeContentTypeParser('application/json');
    hooks.addContentTypeParser('application/json', { parseAs: 'buffer' }, (_request, body, done) =>
      done(null, body),
    );
    hooks.post(
      '/billing/webhooks/stripe',
      {
        config: { public: true },
        schema: {
          tags,
          summary: "Stripe's webhook endpoint (signed; no bearer token)",
          description:
            'Verified with the `Stripe-Signature` header and `STRIPE_WEBHOOK_SECRET`. Acts on `checkout.session.completed` (the plan of the checkout), `invoice.paid` with `billing_reason` `subscription_cycle` (a renewal payment) and `customer.subscription.deleted` (back to free); acknowledges every other event. Each event is applied once, however often Stripe delivers it. 404 unless REPLIX_BILLING_PROVIDER is `stripe`.',
          security: [],
          response: { 200: WebhookReceived, 404: ErrorResponse, ...errorResponses() },
        },
      },
      async (request) => {
        const header = request.headers['stripe-signature'];
        const raw = Buffer.isBuffer(request.body) ? request.body : Buffer.alloc(0);
        return receiveProviderEvent(billing, raw, typeof header === 'string' ? header : undefined);
      },
    );
  });
}
