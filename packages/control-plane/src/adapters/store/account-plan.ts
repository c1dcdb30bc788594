import { type PlanLimits, planLimits } from '../../domain/plans.ts';
import type { StoreDb } from './open-store.ts';

/** The account's plan name and its limits. */
export async function accountPlan(
  db: StoreDb,
  accountId: string,
): Promise<{ plan: string; limits: PlanLimits }> {
  const row = await db
    .selectFrom('accounts')
    .select('plan')
    .where('id', '=', accountId)
    .executeTakeFirst();
  const plan = row?.plan ?? 'free';
  return { plan, limits: planLimits(plan) };
}
