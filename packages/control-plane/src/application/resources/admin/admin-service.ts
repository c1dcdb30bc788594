/** Operator work across accounts: the customer list, plan overrides, deprovisioning. */

import { recordAudit } from '../../../adapters/events/audit-log.ts';
import { changePlan } from '../../../adapters/store/billing-ledger.ts';
import { customerRows, requireCustomer } from '../../../adapters/store/customer-store.ts';
import { databaseIdsOf, liveDatabases } from '../../../adapters/store/database-store.ts';
import { dropQueuedGoal } from '../../../adapters/store/goal-store.ts';
import type { StoreDb } from '../../../adapters/store/open-store.ts';
import type { Goal } from '../../../domain/goal.ts';
import {
  COMPUTE_STATUSES,
  computeUnitsAllowed,
  databaseComputeUnits,
  instanceSizeViolation,
  type OverageState,
  planOf,
  pollIntervalViolation,
  regionViolation,
  replicasViolation,
} from '../../../domain/plan-enforcement.ts';
import { INSTANCE_SIZE_NAMES, type InstanceSize, type Plan } from '../../../domain/plans.ts';
import type { Principal } from '../../identity/principal.ts';
import { iso } from '../common-schemas.ts';
import { auditAction, lockDatabase, queueGoal } from '../databases/database-goals.ts';

/** Queued actions that already take the instance down: a deprovision leaves them be. */
const STOPPING: readonly string[] = ['terminate', 'delete'];

/** Statuses whose database a deprovision terminates. */
const TERMINABLE: readonly string[] = ['running', 'paused', 'failed'];

type Admin = Pick<Principal, 'email' | 'userId'>;

interface LiveDatabase {
  readonly account_id: string;
  readonly status: string;
  readonly instance_size: string;
  readonly replicas: number;
  readonly goal: Goal | null;
  readonly region: string;
  readonly sync_mode: string;
  readonly sync_interval: number;
}

/** True when the account's usage breaks a limit of its plan (spec §2 Customer `overLimit`). */
function overLimit(plan: string, overage: OverageState, databases: LiveDatabase[]): boolean {
  const of = planOf(plan);
  if (databases.length > of.limits.databases) return true;
  const inUse = databases
    .filter((row) => (COMPUTE_STATUSES as readonly string[]).includes(row.status))
    .reduce((sum, row) => sum + databaseComputeUnits(row), 0);
  if (inUse > computeUnitsAllowed(of, overage)) return true;
  return databases.some(
    (row) =>
      ((INSTANCE_SIZE_NAMES as readonly string[]).includes(row.instance_size) &&
        instanceSizeViolation(of, row.instance_size as InstanceSize) !== undefined) ||
      replicasViolation(of, row.replicas) !== undefined ||
      regionViolation(of, row.region) !== undefined ||
      pollIntervalViolation(of, row.sync_mode, row.sync_interval) !== undefined,
  );
}

/** Every customer account with its usage. */
export async function listCustomers(db: StoreDb) {
  const rows = await customerRows(db);
  const databases = await liveDatabases(db);
  const byAccount = Map.groupBy(databases, (row) => row.account_id);
  return rows.map((row) => {
    const { limits } = planOf(row.plan);
    const own = byAccount.get(row.id) ?? [];
    return {
      id: row.id,
      email: row.email,
      plan: row.plan,
      createdAt: iso(row.created_at),
      databaseCount: own.length,
      runningInstanceCount: row.running_count,
      buildsLast30Days: row.builds_30d,
      lastActivityAt: row.last_activity ? new Date(row.last_activity).toISOString() : null,
      planLimit: { databases: limits.databases, computeUnits: limits.computeUnits },
      overLimit: overLimit(
        row.plan,
        {
          enabled: row.overage_enabled ?? false,
          spendingCapCents: row.spending_cap_cents ?? null,
        },
        own,
      ),
    };
  });
}

/** Puts a customer on `plan` without the payment provider, in their audit log as the admin's. */
export async function overridePlan(db: StoreDb, { email, userId }: Admin, id: string, plan: Plan) {
  await db.transaction().execute(async (tx) => {
    await requireCustomer(tx, id);
    await changePlan(tx, id, plan, { kind: 'admin', adminEmail: email, adminUserId: userId });
  });
  return { id, plan };
}

/**
 * Terminates every running, paused or failed database of the account and cancels queued
 * actions nobody started; actions already started are left to finish (`ok` false).
 */
export async function deprovisionCustomer(db: StoreDb, by: Admin, accountId: string) {
  const admin = { adminEmail: by.email, adminUserId: by.userId };
  return db.transaction().execute(async (tx) => {
    await requireCustomer(tx, accountId);
    const ids = await databaseIdsOf(tx, accountId);
    let affected = 0;
    let inProgress = 0;
    for (const { id } of ids) {
      const locked = await lockDatabase(tx, accountId, id);
      const { row } = locked;
      if (locked.matrix.terminate.allowed) {
        await queueGoal(tx, accountId, row, 'terminate', {}, admin);
        affected++;
        continue;
      }
      const goal = row.goal;
      if (!goal) continue; // draft, terminated: nothing runs
      if (STOPPING.includes(goal.action)) continue; // already on its way down
      if (goal.claimedAt) {
        inProgress++;
        continue;
      }
      // A queued action nobody started: cancel it, then terminate what was deployed.
      await dropQueuedGoal(tx, row.id, goal.fromStatus);
      await auditAction(tx, accountId, row, 'cancel-goal', {
        fromStatus: row.status,
        toStatus: goal.fromStatus,
        cancelledAction: goal.action,
        ...admin,
      });
      if (TERMINABLE.includes(goal.fromStatus)) {
        const restored = { ...row, status: goal.fromStatus, goal: null };
        await queueGoal(tx, accountId, restored, 'terminate', {}, admin);
      }
      affected++;
    }
    await recordAudit(tx, {
      accountId,
      entityType: 'account',
      entityId: accountId,
      eventType: 'account.deprovisioned',
      payload: { databasesAffected: affected, inProgress, ...admin },
    });
    return { ok: inProgress === 0, databasesAffected: affected };
  });
}
