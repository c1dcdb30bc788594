import type { OverageState } from '../../domain/plan-enforcement.ts';
import { type PlanLimits, planLimits, withPollFloor } from '../../domain/plans.ts';
import type { StoreDb } from './open-store.ts';

/**
 * The account's plan name and its limits; `minPollInterval` (the control plane's
 * REPLIX_MIN_POLL_INTERVAL) replaces the plan's poll floor when given.
 */
export async function accountPlan(
  db: StoreDb,
  accountId: string,
  minPollInterval?: number,
): Promise<{ plan: string; limits: PlanLimits }> {
  const row = await db
    .selectFrom('accounts')
    .select('plan')
    .where('id', '=', accountId)
    .executeTakeFirst();
  const plan = row?.plan ?? 'free';
  return { plan, limits: withPollFloor(planLimits(plan), minPollInterval) };
}

export async function overageState(db: StoreDb, accountId: string): Promise<OverageState> {
  const row = await db
    .selectFrom('billing_accounts')
    .select(['overage_enabled', 'spending_cap_cents'])
    .where('account_id', '=', accountId)
    .executeTakeFirst();
  return {
    enabled: row?.overage_enabled ?? false,
    spendingCapCents: row?.spending_cap_cents ?? null,
  };
}

/** The account's email and plan name, as its billing pages show them. */
export function accountEmailAndPlan(
  db: StoreDb,
  accountId: string,
): Promise<{ email: string; plan: string }> {
  return db
    .selectFrom('accounts')
    .select(['email', 'plan'])
    .where('id', '=', accountId)
    .executeTakeFirstOrThrow();
}
