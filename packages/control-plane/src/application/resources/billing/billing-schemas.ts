import { Type } from 'typebox';
import { CHECKOUT_PLANS, INSTANCE_SIZE_NAMES } from '../../../domain/plans.ts';
import { DateTime } from '../common-schemas.ts';

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
    maxReplicas: Type.Integer({
      description:
        'The most read replicas a database may run; each counts its size’s compute units.',
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

export const SUBSCRIPTION_STATUSES = ['none', 'active', 'canceled'] as const;

export const Billing = Type.Object(
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

export const CheckoutBody = Type.Object(
  {
    plan: Type.Enum([...CHECKOUT_PLANS], {
      description:
        '`pro`, `teams` or `business`. `enterprise` is sales-led (a service admin sets it); `free` is a downgrade: cancel the subscription in the billing portal.',
    }),
  },
  { additionalProperties: false },
);

export const CheckoutUrl = Type.Object(
  {
    url: Type.String({
      format: 'uri',
      description:
        "Redirect the user there: the provider's checkout page, or its billing portal when the account already has an active subscription.",
    }),
  },
  { $id: 'CheckoutUrl' },
);

export const OverageBody = Type.Object(
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

export const OverageSettings = Type.Object(
  {
    ok: Type.Boolean(),
    overageEnabled: Type.Boolean(),
    spendingCapCents: Type.Union([Type.Integer(), Type.Null()]),
  },
  { $id: 'OverageSettings' },
);

export const WebhookReceived = Type.Object(
  { received: Type.Boolean() },
  { $id: 'WebhookReceived' },
);
