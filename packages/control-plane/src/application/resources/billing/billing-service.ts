import type { Buffer } from 'node:buffer';
/** Plans and payments: the billing page's figures, checkout, overage, provider webhooks. */
import type { Logger } from 'pino';
import { recordAudit } from '../../../adapters/events/audit-log.ts';
import { accountPlan } from '../../../adapters/store/account-plan.ts';
import { lockAccount } from '../../../adapters/store/account-store.ts';
import {
  applyBillingEvent,
  billingAccount,
  hasActiveSubscription,
  updateBillingAccount,
} from '../../../adapters/store/billing-ledger.ts';
import type { StoreDb } from '../../../adapters/store/open-store.ts';
import { ApiError } from '../../../domain/errors.ts';
import { computeUnitsAllowed, type PlanOf } from '../../../domain/plan-enforcement.ts';
import {
  CHECKOUT_PLANS,
  type CheckoutPlan,
  OVERAGE_CENTS_PER_COMPUTE_UNIT_MONTH,
  PLAN_LIMITS,
  PLANS,
  withPollFloor,
} from '../../../domain/plans.ts';
import { type PaymentProvider, WebhookSignatureError } from '../../payments/payment-provider.ts';
import { accountUsage } from '../../payments/plan-usage.ts';
import { iso } from '../common-schemas.ts';
import { accountEmail } from './billing-queries.ts';
import { SUBSCRIPTION_STATUSES } from './billing-schemas.ts';
import { limitsResource } from './limits-resource.ts';

/** What billing works with: the store, the configured payment provider and a log for its failures. */
export interface BillingDeps {
  readonly db: StoreDb;
  readonly provider: PaymentProvider;
  readonly log: Logger;
  /** The control plane's poll floor for every plan (REPLIX_MIN_POLL_INTERVAL), if it has one. */
  readonly minPollInterval?: number;
}

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

/** Runs a provider call; its failure says nothing internal to the caller. */
async function providerCall<T>(
  { provider, log }: BillingDeps,
  what: string,
  call: () => Promise<T>,
): Promise<T> {
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

/** The account's plan, subscription, overage settings, limits and usage. */
export async function billingOverview(
  { db, provider, minPollInterval }: BillingDeps,
  accountId: string,
) {
  const plan = await accountPlan(db, accountId, minPollInterval);
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
    plans: PLANS.map((name) => ({
      name,
      limits: limitsResource(withPollFloor(PLAN_LIMITS[name], minPollInterval)),
    })),
  };
}

/**
 * The URL of a hosted checkout for `plan`, or of the billing portal when the account already
 * has an active subscription. `origin` is the control plane's own address, for return links.
 */
export async function startCheckout(
  deps: BillingDeps,
  accountId: string,
  plan: CheckoutPlan,
  origin: string,
): Promise<{ url: string }> {
  const { db, provider } = deps;
  const billing = await billingAccount(db, accountId);
  if (billing && hasActiveSubscription(billing, provider.name)) {
    return providerCall(deps, 'portal', () =>
      provider.createPortal({ accountId, customerId: billing.customer_id, origin }),
    );
  }
  const email = await accountEmail(db, accountId);
  const session = await providerCall(deps, 'checkout', () =>
    provider.createCheckout({
      accountId,
      email,
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
}

/** Turns overage on with a spending cap (when the plan and payments allow it) or off. */
export async function setOverage(
  { db, provider }: BillingDeps,
  accountId: string,
  { enabled, spendingCapCents }: { readonly enabled: boolean; readonly spendingCapCents?: number },
) {
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
}

/**
 * Verifies a provider webhook's signature over its exact bytes and applies the event once.
 * 404 when the provider takes no webhooks (the local one).
 */
export async function receiveProviderEvent(
  { db, provider, log }: BillingDeps,
  raw: Buffer,
  signature: string | undefined,
): Promise<{ received: boolean }> {
  const verify = provider.verifyWebhook;
  if (!verify) throw new ApiError('not_found', 'No such route.');
  let event: ReturnType<typeof verify>;
  try {
    event = verify(raw, signature);
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
}
