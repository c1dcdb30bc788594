import type { Kysely, Selectable, Updateable } from 'kysely';
import type { BillingProviderName } from '../../application/payments/billing-config.ts';
import type { BillingEvent } from '../../application/payments/payment-provider.ts';
import { asPlan, planLimits } from '../../domain/plans.ts';
import { recordAudit } from '../events/audit-log.ts';
import type { BillingAccountTable, Store } from './schema.ts';

/**
 * The account side of billing: the subscription, renewal payments and overage settings in
 * `billing_accounts`, and the plan on `accounts`. Every change records its audit event in the
 * caller's transaction.
 */

export type BillingAccount = Selectable<BillingAccountTable>;

/** Who changed a plan: the payment provider, or a service admin (spec §4.1 admin override). */
export type PlanChangeSource =
  | { readonly kind: 'checkout'; readonly provider: BillingProviderName }
  | { readonly kind: 'subscription_ended'; readonly provider: BillingProviderName }
  | { readonly kind: 'subscription_changed'; readonly provider: BillingProviderName }
  | { readonly kind: 'admin'; readonly adminEmail: string; readonly adminUserId: string };

export async function billingAccount(
  db: Kysely<Store>,
  accountId: string,
): Promise<BillingAccount | undefined> {
  return db
    .selectFrom('billing_accounts')
    .selectAll()
    .where('account_id', '=', accountId)
    .executeTakeFirst();
}

/** True when the account pays through `provider` now: checkout then leads to the portal. */
export function hasActiveSubscription(
  billing: BillingAccount | undefined,
  provider: BillingProviderName,
): boolean {
  return billing?.subscription_status === 'active' && billing.provider === provider;
}

/**
 * Sets columns of the account's billing row (and `updated_at`), making the row first when it
 * has none.
 */
export async function updateBillingAccount(
  tx: Kysely<Store>,
  accountId: string,
  provider: BillingProviderName,
  values: Updateable<BillingAccountTable>,
): Promise<void> {
  await tx
    .insertInto('billing_accounts')
    .values({ account_id: accountId, provider })
    .onConflict((oc) => oc.column('account_id').doNothing())
    .execute();
  await tx
    .updateTable('billing_accounts')
    .set({ updated_at: new Date(), ...values })
    .where('account_id', '=', accountId)
    .execute();
}

/**
 * Puts the account on `toPlan`. Overage is turned off on a plan without it, and a spending cap
 * above the new plan's maximum is lowered to it. Returns the plan before.
 */
export async function changePlan(
  tx: Kysely<Store>,
  accountId: string,
  toPlan: string,
  source: PlanChangeSource,
): Promise<string> {
  const account = await tx
    .selectFrom('accounts')
    .select('plan')
    .where('id', '=', accountId)
    .forUpdate()
    .executeTakeFirstOrThrow();
  const fromPlan = account.plan;
  const limits = planLimits(toPlan);
  await tx
    .updateTable('accounts')
    .set({ plan: toPlan, updated_at: new Date() })
    .where('id', '=', accountId)
    .execute();
  if (!limits.overageAllowed) {
    await tx
      .updateTable('billing_accounts')
      .set({ overage_enabled: false, spending_cap_cents: null, updated_at: new Date() })
      .where('account_id', '=', accountId)
      .execute();
  } else {
    await tx
      .updateTable('billing_accounts')
      .set({ spending_cap_cents: limits.overageMaxCents, updated_at: new Date() })
      .where('account_id', '=', accountId)
      .where('spending_cap_cents', '>', limits.overageMaxCents)
      .execute();
  }
  // An admin's override is recorded even when it changes nothing: every admin action is.
  if (fromPlan !== toPlan || source.kind === 'admin') {
    const { kind, ...who } = source;
    await recordAudit(tx, {
      accountId,
      entityType: 'account',
      entityId: accountId,
      eventType: 'account.plan_changed',
      payload: { fromPlan, toPlan, source: kind, ...who },
    });
  }
  return fromPlan;
}

/** The account a provider event is about: by checkout metadata, else by subscription or customer. */
async function accountFor(
  tx: Kysely<Store>,
  provider: BillingProviderName,
  event: Exclude<BillingEvent, { kind: 'ignored' }>,
): Promise<string | undefined> {
  if (event.kind === 'subscription_started' && event.accountId) {
    const account = await tx
      .selectFrom('accounts')
      .select('id')
      .where('id', '=', event.accountId)
      .executeTakeFirst();
    if (account) return account.id;
  }
  for (const [column, value] of [
    ['subscription_id', event.subscriptionId],
    ['customer_id', event.customerId],
  ] as const) {
    if (!value) continue;
    const row = await tx
      .selectFrom('billing_accounts')
      .select('account_id')
      .where('provider', '=', provider)
      .where(column, '=', value)
      .executeTakeFirst();
    if (row) return row.account_id;
  }
  return undefined;
}

export type ApplyOutcome = 'applied' | 'duplicate' | 'ignored' | 'unknown_account';

/**
 * Applies one provider event, once: the event id is recorded first, so a redelivery (providers
 * retry until they get a 2xx) changes nothing. Call inside a transaction.
 */
export async function applyBillingEvent(
  tx: Kysely<Store>,
  provider: BillingProviderName,
  event: BillingEvent,
): Promise<ApplyOutcome> {
  const fresh = await tx
    .insertInto('billing_events')
    .values({ provider, event_id: event.eventId, event_type: event.kind })
    .onConflict((oc) => oc.columns(['provider', 'event_id']).doNothing())
    .returning('event_id')
    .executeTakeFirst();
  if (!fresh) return 'duplicate';
  if (event.kind === 'ignored') return 'ignored';
  const accountId = await accountFor(tx, provider, event);
  if (!accountId) return 'unknown_account';
  const now = new Date();
  const audit = (entry: { eventType: string; payload: Record<string, unknown> }) =>
    recordAudit(tx, { accountId, entityType: 'account', entityId: accountId, ...entry });

  if (event.kind === 'subscription_started') {
    const plan = event.plan ? asPlan(event.plan) : 'free';
    await updateBillingAccount(tx, accountId, provider, {
      provider,
      customer_id: event.customerId,
      subscription_id: event.subscriptionId,
      subscription_status: 'active',
      subscription_plan: plan,
      // Renewals count per subscription: a new subscription has had none yet.
      renewal_payments: 0,
      last_renewal_at: null,
      updated_at: now,
    });
    await audit({ eventType: 'billing.subscription_started', payload: { plan, provider } });
    await changePlan(tx, accountId, plan, { kind: 'checkout', provider });
    return 'applied';
  }

  const current = await billingAccount(tx, accountId);
  // An event about an older subscription than the account's current one changes nothing.
  if (event.subscriptionId && current?.subscription_id !== event.subscriptionId) return 'ignored';

  if (event.kind === 'renewal_paid') {
    const row = await tx
      .updateTable('billing_accounts')
      .set((eb) => ({
        renewal_payments: eb('renewal_payments', '+', 1),
        last_renewal_at: now,
        updated_at: now,
      }))
      .where('account_id', '=', accountId)
      .returning('renewal_payments')
      .executeTakeFirst();
    if (!row) return 'ignored';
    await audit({
      eventType: 'billing.renewal_paid',
      payload: { renewalPayments: row.renewal_payments, provider },
    });
    return 'applied';
  }

  if (event.kind === 'subscription_changed') {
    // A price we do not sell (a change made by hand in the provider) leaves the plan alone.
    if (!event.plan) return 'ignored';
    const plan = asPlan(event.plan);
    await tx
      .updateTable('billing_accounts')
      .set({ subscription_plan: plan, updated_at: now })
      .where('account_id', '=', accountId)
      .execute();
    await audit({ eventType: 'billing.subscription_changed', payload: { plan, provider } });
    await changePlan(tx, accountId, plan, { kind: 'subscription_changed', provider });
    return 'applied';
  }

  await tx
    .updateTable('billing_accounts')
    .set({ subscription_status: 'canceled', overage_enabled: false, updated_at: now })
    .where('account_id', '=', accountId)
    .execute();
  await audit({
    eventType: 'billing.subscription_ended',
    payload: { plan: current?.subscription_plan ?? null, provider },
  });
  await changePlan(tx, accountId, 'free', { kind: 'subscription_ended', provider });
  return 'applied';
}
