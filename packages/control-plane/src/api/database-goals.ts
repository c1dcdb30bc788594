import type { Kysely, Selectable } from 'kysely';
import { type AllowedActions, allowedActions } from '../domain/allowed-actions.ts';
import type { Action, DatabaseStatus } from '../domain/database-status.ts';
import { asPlan, type InstanceSize, type Plan } from '../domain/plans.ts';
import { ApiError, notFound } from '../errors.ts';
import { recordAudit } from '../events/audit-log.ts';
import type { DatabaseTable, Goal, Store } from '../store/schema.ts';

/**
 * How an accepted database action is recorded: lock the row, check the allowed-actions matrix,
 * write the goal and its transitional status with the audit event. The action routes and the
 * admin deprovision share it, so a goal is recorded one way whoever asks.
 */

/** The transitional status each queued action puts the database in (the reconciler moves on). */
export const QUEUED_STATUS = {
  provision: 'building',
  rebuild: 'building',
  reconfigure: 'deploying',
  redeploy: 'deploying',
  resize: 'deploying',
  resume: 'deploying',
  pause: 'pausing',
  terminate: 'terminating',
  delete: 'deleting',
} as const satisfies Partial<Record<Action, DatabaseStatus>>;

export type QueuedAction = keyof typeof QUEUED_STATUS;

export type DatabaseRow = Selectable<DatabaseTable>;

export interface Locked {
  readonly row: DatabaseRow;
  readonly plan: Plan;
  readonly matrix: AllowedActions;
}

/**
 * Locks the caller's database row for the rest of the transaction and computes its matrix, so
 * two concurrent actions cannot both pass the check.
 */
export async function lockDatabase(
  tx: Kysely<Store>,
  accountId: string,
  id: string,
): Promise<Locked> {
  const row = await tx
    .selectFrom('databases')
    .selectAll()
    .where('id', '=', id)
    .where('account_id', '=', accountId)
    .where('deleted_at', 'is', null)
    .forUpdate()
    .executeTakeFirst();
  if (!row) throw notFound('Database');
  const account = await tx
    .selectFrom('accounts')
    .select('plan')
    .where('id', '=', accountId)
    .executeTakeFirstOrThrow();
  const build = await tx
    .selectFrom('builds')
    .select('id')
    .where('database_id', '=', id)
    .where('status', '=', 'succeeded')
    .limit(1)
    .executeTakeFirst();
  const plan = asPlan(account.plan);
  const matrix = allowedActions({
    status: row.status as DatabaseStatus,
    goal: row.goal,
    plan,
    hasBuild: build !== undefined,
    replicationPaused: row.replication_paused,
  });
  return { row, plan, matrix };
}

export function requireAllowed(locked: Locked, action: Action): void {
  const availability = locked.matrix[action];
  if (!availability.allowed) {
    throw new ApiError('action_not_allowed', availability.reason ?? 'Not allowed now.');
  }
}

export function auditAction(
  tx: Kysely<Store>,
  accountId: string,
  row: DatabaseRow,
  action: Action,
  payload: Record<string, unknown>,
): Promise<void> {
  return recordAudit(tx, {
    accountId,
    databaseId: row.id,
    entityType: 'database',
    entityId: row.id,
    eventType: `database.${action.replaceAll('-', '_')}`,
    payload,
  });
}

/** Records the goal and the transitional status the reconciler starts from. */
export async function queueGoal(
  tx: Kysely<Store>,
  accountId: string,
  row: DatabaseRow,
  action: QueuedAction,
  extra: { buildId?: string; instanceSize?: InstanceSize } = {},
  /** More audit payload: who asked, when it is not the account's own user (an admin). */
  auditExtra: Record<string, unknown> = {},
): Promise<DatabaseStatus> {
  const toStatus = QUEUED_STATUS[action];
  const goal: Goal = {
    action,
    fromStatus: row.status,
    requestedAt: new Date().toISOString(),
    ...extra,
  };
  await tx
    .updateTable('databases')
    .set({ goal: JSON.stringify(goal), status: toStatus, updated_at: new Date() })
    .where('id', '=', row.id)
    .execute();
  await auditAction(tx, accountId, row, action, {
    fromStatus: row.status,
    toStatus,
    ...extra,
    ...auditExtra,
  });
  return toStatus;
}
