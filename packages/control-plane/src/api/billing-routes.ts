import type { FastifyRequest } from 'fastify';
import { Type } from 'typebox';
import {
  applyBillingEvent,
  billingAccount,
  hasActiveSubscription,
  updateBillingAccount,
} from '../billing/billing-ledger.ts';
import { billingConfigOf, createPaymentProvider } from '../billing/create-payment-provider.ts';
import { WebhookSignatureError } from '../billing/payment-provider.ts';
import { accountPlan } from '../connections/account-plan.ts';
import { accountUsage, computeUnitsAllowed, type PlanOf } from '../domain/plan-enforcement.ts';
import {
  CHECKOUT_PLANS,
  INSTANCE_SIZE_NAMES,
  OVERAGE_CENTS_PER_COMPUTE_UNIT_MONTH,
  PLAN_LIMITS,
  PLANS,
  type PlanLimits,
} from '../domain/plans.ts';
import { ApiError } from '../errors.ts';
import { recordAudit } from '../events/audit-log.ts';
import { lockAccount } from '../team/team-membership.ts';
import type { ApiServer } from './api-server.ts';
import { DateTime, ErrorResponse, errorResponses, iso } from './common-schemas.ts';
import type { ApiContext } from './context.ts';

const tags = ['billing'];

/** A plan's limits as the API shows them (domain/plans.ts). */
export const PlanLimitsSchema = Type.Object(
  {
    databases: Type.Integer({ description: 'Databases the account may have (not deleted).' }),
    computeUnits: Type.Integer({
      description:
        'Compute units its building, deploying and running instances may use together (xs 1, s 2, m 4, l 8, xl 16).',
    }),
    maxInstanceSize: Type.Enum([...INSTANCE_SIZE_NAMES], {
      description: 'The largest instance size.',
    }),
    pollModeMinSyncInterval: Type.Integer({
      description: 'Seconds: the shortest sync interval in poll mode.',
    }),
    dataTransferGBPerMonth: Type.Integer({ description: 'Monthly data transfer allowance, GB.' }),
    multiRegion: Type.Boolean({ description: 'Instances may run in any region (Teams and up).' }),
    overageAllowed: Type.Boolean({
      description: 'Overage can be turned on (Teams and up, after a renewal payment).',
    }),
    overageMaxCents: Type.Integer({
      description: 'The largest overage spending cap, USD cents a month; 0 without overage.',
    }),
  },
  { $id: 'PlanLimits' },
);

export const UsageSchema = Type.Object(
  {
    databases: Type.Integer(),
    computeUnits: Type.Integer({
      description: 'Compute units of the building, deploying and running instances.',
    }),
  },
  { $id: 'PlanUsage' },
);

export function limitsResource(limits: PlanLimits) {
  return {
    databases: limits.databases,
    computeUnits: limits.computeUnits,
    maxInstanceSize: limits.maxInstanceSize,
    pollModeMinSyncInterval: limits.pollModeMinSyncInterval,
    dataTransferGBPerMonth: limits.dataTransferGBPerMonth,
    multiRegion: limits.multiRegion,
    overageAllowed: limits.overageAllowed,
    overageMaxCents: limits.overageMaxCents,
  };
}

const SUBSCRIPTION_STATUSES = ['none', 'active', 'canceled'] as const;

const Billing = Type.Object(
  {
    plan: Type.String(),
    provider: Type.Union([Type.Literal('local'), Type.Literal('stripe')]),
    checkoutPlans: Type.Array(Type.String(), {
      description: 'The plans `POST /v1/billing/checkout` sells.',
    }),
    subscription: Type.Object({
      status: Type.Enum([...SUBSCRIPTION_STATUSES], {
        description: '`none` (never subscribed), `active`, or `canceled` (ended; back on free).',
      }),
      plan: Type.Union([Type.String(), Type.Null()]),
      renewalPayments: Type.Integer({
        description: 'Successful renewal payments of the current subscription (not its first).',
      }),
      lastRenewalAt: Type.Union([DateTime, Type.Null()]),
    }),
    overage: Type.Object({
      enabled: Type.Boolean(),
      spendingCapCents: Type.Union([Type.Integer(), Type.Null()]),
      eligible: Type.Boolean({ description: 'Overage can be turned on now.' }),
      reason: Type.Union([Type.String(), Type.Null()], {
        description: 'Why it cannot, when `eligible` is false.',
      }),
      maxSpendingCapCents: Type.Integer(),
      centsPerComputeUnitMonth: Type.Integer(),
      computeUnitsAllowed: Type.Integer({
        description: "The plan's compute units plus what the spending cap pays for.",
      }),
    }),
    limits: PlanLimitsSchema,
    usage: UsageSchema,
    plans: Type.Array(
      Type.Object({
        name: Type.String(),
        limits: Type.Object(PlanLimitsSchema.properties),
      }),
      { description: 'Every plan with its standard limits, smallest first, to compare them.' },
    ),
  },
  { $id: 'Billing' },
);

const CheckoutBody = Type.Object(
  {
    plan: Type.Enum([...CHECKOUT_PLANS], {
      description:
        '`pro`, `teams` or `business`. `enterprise` is sales-led (a service admin sets it); `free` is a downgrade: cancel the subscription in the billing portal.',
    }),
  },
  { additionalProperties: false },
);

const CheckoutUrl = Type.Object(
  {
    url: Type.String({
      format: 'uri',
      description:
        "Redirect the user there: the provider's checkout page, or its billing portal when the account already has an active subscription.",
    }),
  },
  { $id: 'CheckoutUrl' },
);

const OverageBody = Type.Object(
  {
    enabled: Type.Boolean(),
    spendingCapCents: Type.Optional(
      Type.Integer({
        minimum: 1,
        description:
          'Required when `enabled` is true; at most the plan’s `overageMaxCents`. Ignored when turning overage off.',
      }),
    ),
  },
  { additionalProperties: false },
);

const OverageSettings = Type.Object(
  {
    ok: Type.Boolean(),
    overageEnabled: Type.Boolean(),
    spendingCapCents: Type.Union([Type.Integer(), Type.Null()]),
  },
  { $id: 'OverageSettings' },
);

/** Why overage cannot be turned on (spec §4.1 rule 1), or undefined when it can. */
function overageRefusal({ plan, limits }: PlanOf, renewalPayments: number): string | undefined {
  if (!limits.overageAllowed) {
    return `Overage needs the Teams plan or above; the ${plan} plan has none.`;
  }
  if (renewalPayments < 1) {
    return 'Overage needs at least one successful renewal payment of your subscription; it has had none yet.';
  }
  return undefined;
}

/** The control plane's own address, for local pages and the default return address. */
function originOf(context: ApiContext, request: FastifyRequest): string {
  return context.config.publicUrl ?? `${request.protocol}://${request.host}`;
}

/** Plans and payments: the dashboard's billing page, checkout, overage, provider webhooks. */
export function registerBillingRoutes(app: ApiServer, context: ApiContext): void {
  const { db, log } = context;
  const config = billingConfigOf(context.config);
  const provider = createPaymentProvider(config, db);

  /** Runs a provider call; its failure says nothing internal to the caller. */
  async function providerCall<T>(what: string, call: () => Promise<T>): Promise<T> {
    try {
      return await call();
    } catch (error) {
      log.warn(
        { provider: provider.name, what, reason: (error as Error).name },
        'payment provider call failed',
      );
      throw new ApiError(
        'payment_provider_unavailable',
        'The payment provider did not answer; nothing changed. Try again in a moment.',
      );
    }
  }

  app.get(
    '/billing',
    {
      schema: {
        tags,
        summary: "The account's plan, subscription, overage settings, limits and usage",
        response: { 200: Billing, ...errorResponses() },
      },
    },
    async (request) => {
      const { accountId } = request.principal;
      const plan = await accountPlan(db, accountId);
      const billing = await billingAccount(db, accountId);
      const renewalPayments = billing?.renewal_payments ?? 0;
      const overage = {
        enabled: billing?.overage_enabled ?? false,
        spendingCapCents: billing?.spending_cap_cents ?? null,
      };
      const refusal = overageRefusal(plan, renewalPayments);
      const status = billing?.subscription_status ?? 'none';
      return {
        plan: plan.plan,
        provider: provider.name,
        checkoutPlans: [...CHECKOUT_PLANS],
        subscription: {
          status: SUBSCRIPTION_STATUSES.find((known) => known === status) ?? 'none',
          plan: billing?.subscription_plan ?? null,
          renewalPayments,
          lastRenewalAt: iso(billing?.last_renewal_at ?? null),
        },
        overage: {
          ...overage,
          eligible: refusal === undefined,
          reason: refusal ?? null,
          maxSpendingCapCents: plan.limits.overageMaxCents,
          centsPerComputeUnitMonth: OVERAGE_CENTS_PER_COMPUTE_UNIT_MONTH,
          computeUnitsAllowed: computeUnitsAllowed(plan, overage),
        },
        limits: limitsResource(plan.limits),
        usage: await accountUsage(db, accountId),
        plans: PLANS.map((name) => ({ name, limits: limitsResource(PLAN_LIMITS[name]) })),
      };
    },
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
    async (request) => {
      const { accountId } = request.principal;
      const origin = originOf(context, request);
      const billing = await billingAccount(db, accountId);
      if (billing && hasActiveSubscription(billing, provider.name)) {
        return providerCall('portal', () =>
          provider.createPortal({ accountId, customerId: billing.customer_id, origin }),
        );
      }
      const account = await db
        .selectFrom('accounts')
        .select('email')
        .where('id', '=', accountId)
        .executeTakeFirstOrThrow();
      const { plan } = request.body;
      const session = await providerCall('checkout', () =>
        provider.createCheckout({
          accountId,
          email: account.email,
          plan,
          customerId: billing?.provider === provider.name ? billing.customer_id : null,
          origin,
        }),
      );
      await db.transaction().execute(async (tx) => {
        await updateBillingAccount(tx, accountId, provider.name, {
          provider: provider.name,
          customer_id: session.customerId,
        });
        await recordAudit(tx, {
          accountId,
          entityType: 'account',
          entityId: accountId,
          eventType: 'billing.checkout_started',
          payload: { plan, provider: provider.name },
        });
      });
      return { url: session.url };
    },
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
    async (request) => {
      const { accountId } = request.principal;
      const { enabled, spendingCapCents } = request.body;
      if (enabled && spendingCapCents === undefined) {
        throw new ApiError(
          'validation_failed',
          'body.spendingCapCents is required when enabled is true.',
        );
      }
      const cap = enabled ? (spendingCapCents as number) : null;
      await db.transaction().execute(async (tx) => {
        await lockAccount(tx, accountId);
        if (enabled) {
          const plan = await accountPlan(tx, accountId);
          const billing = await billingAccount(tx, accountId);
          const refusal = overageRefusal(plan, billing?.renewal_payments ?? 0);
          if (refusal) throw new ApiError('plan_limit', refusal);
          if ((cap as number) > plan.limits.overageMaxCents) {
            throw new ApiError(
              'validation_failed',
              `body.spendingCapCents must be at most ${plan.limits.overageMaxCents} (the ${plan.plan} plan's maximum).`,
            );
          }
        }
        await updateBillingAccount(tx, accountId, provider.name, {
          overage_enabled: enabled,
          spending_cap_cents: cap,
        });
        await recordAudit(tx, {
          accountId,
          entityType: 'account',
          entityId: accountId,
          eventType: 'billing.overage_updated',
          payload: { overageEnabled: enabled, spendingCapCents: cap },
        });
      });
      return { ok: true, overageEnabled: enabled, spendingCapCents: cap };
    },
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
          response: {
            200: Type.Object({ received: Type.Boolean() }, { $id: 'WebhookReceived' }),
            404: ErrorResponse,
            ...errorResponses(),
          },
        },
      },
      async (request) => {
        const verify = provider.verifyWebhook;
        if (!verify) throw new ApiError('not_found', 'No such route.');
        const header = request.headers['stripe-signature'];
        const raw = Buffer.isBuffer(request.body) ? request.body : Buffer.alloc(0);
        let event: ReturnType<typeof verify>;
        try {
          event = verify(raw, typeof header === 'string' ? header : undefined);
        } catch (error) {
          if (error instanceof WebhookSignatureError) {
            throw new ApiError('invalid_signature', error.message);
          }
          throw error;
        }
        const outcome = await db
          .transaction()
          .execute((tx) => applyBillingEvent(tx, provider.name, event));
        if (outcome === 'unknown_account') {
          log.warn({ eventId: event.eventId, kind: event.kind }, 'billing event for no account');
        }
        return { received: true };
      },
    );
  });
}
