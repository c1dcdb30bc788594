import type { Kysely } from 'kysely';
import { accountPlan, overageState } from '../../adapters/store/account-plan.ts';
import { lockAccount } from '../../adapters/store/account-store.ts';
import { computeRowsOf, countLiveDatabases } from '../../adapters/store/database-store.ts';
import type { Store } from '../../adapters/store/schema.ts';
import { ApiError } from '../../domain/errors.ts';
import {
  COMPUTE_STATUSES,
  computeUnitsViolation,
  databaseComputeUnits,
  replicatedComputeUnits,
} from '../../domain/plan-enforcement.ts';

/**
 * What an account uses of its plan, read from the store: compute units in use, its overage
 * setting, and the check that a database fits next to its other instances. The rules
 * themselves are pure, in domain/plan-enforcement.ts.
 */

/** Compute units in use by the account's instances, leaving out `exceptDatabaseId`. */
export async function computeUnitsInUse(
  db: Kysely<Store>,
  accountId: string,
  exceptDatabaseId?: string,
): Promise<number> {
  const rows = await computeRowsOf(db, accountId, COMPUTE_STATUSES, exceptDatabaseId);
  return rows.reduce((sum, row) => sum + databaseComputeUnits(row), 0);
}

/**
 * Checks that the account can run database `databaseId` at `size` with `replicas` replicas
 * next to its other instances.
 * Locks the account row first, so two concurrent provisions cannot both take the last units.
 * Call inside the transaction that records the action.
 */
export async function assertComputeUnits(
  tx: Kysely<Store>,
  accountId: string,
  databaseId: string,
  size: string,
  replicas: number,
): Promise<void> {
  await lockAccount(tx, accountId);
  const plan = await accountPlan(tx, accountId);
  const inUse = await computeUnitsInUse(tx, accountId, databaseId);
  const requested = replicatedComputeUnits(size, replicas);
  const overage = await overageState(tx, accountId);
  const violation = computeUnitsViolation(plan, overage, inUse, requested);
  if (violation) throw new ApiError('plan_limit', violation);
}

/** What the account uses of its plan's limits now. */
export interface AccountUsage {
  /** Databases not deleted. */
  readonly databases: number;
  /** Compute units of its building, deploying and running instances. */
  readonly computeUnits: number;
}

export async function accountUsage(db: Kysely<Store>, accountId: string): Promise<AccountUsage> {
  return {
    databases: await countLiveDatabases(db, accountId),
    computeUnits: await computeUnitsInUse(db, accountId),
  };
}
