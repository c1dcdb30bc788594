import { currentTraceparent } from '@replix/runtime/tracing';
import type { Kysely } from 'kysely';
import { recordAudit } from '../../../adapters/events/audit-log.ts';
import { hasSucceededBuild } from '../../../adapters/store/build-store.ts';
import type { DatabaseRow } from '../../../adapters/store/database-store.ts';
import { lockDatabaseRow } from '../../../adapters/store/database-store.ts';
import { recordGoal } from '../../../adapters/store/goal-store.ts';
import type { Store } from '../../../adapters/store/schema.ts';
import { type AllowedActions, allowedActions } from '../../../domain/allowed-actions.ts';
import {
  type Action,
  type DatabaseStatus,
  QUEUED_STATUS,
  type QueuedAction,
} from '../../../domain/database-lifecycle.ts';
import { ApiError, notFound } from '../../../domain/errors.ts';
import type { Goal } from '../../../domain/goal.ts';
import { asPlan, type InstanceSize, type Plan } from '../../../domain/plans.ts';
import { planNameOf } from './databases-queries.ts';

/**
 * How an accepted database action is recorded: lock the row, check the allowed-actions matrix,
 * write the goal and its transitional status with the audit event. The action routes and the
 * admin deprovision share it, so a goal is recorded one way whoever asks.
 */

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
  const row = await lockDatabaseRow(tx, accountId, id);
  if (!row) throw notFound('Database');
  const planName = await planNameOf(tx, accountId);
  const hasBuild = await hasSucceededBuild(tx, id);
  const plan = asPlan(planName);
  const matrix = allowedActions({
    status: row.status as DatabaseStatus,
    goal: row.goal,
    plan,
    hasBuild,
    hasDeployment: row.current_build_id !== null,
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
  extra: { buildId?: string; instanceSize?: InstanceSize; replicas?: number } = {},
  /** More audit payload: who asked, when it is not the account's own user (an admin). */
  auditExtra: Record<string, unknown> = {},
): Promise<DatabaseStatus> {
  const toStatus = QUEUED_STATUS[action];
  const traceparent = currentTraceparent();
  // The action's own fields are in `extra` (its route checked them): a goal of that action.
  const goal = {
    action,
    fromStatus: row.status,
    requestedAt: new Date().toISOString(),
    ...extra,
    ...(traceparent ? { traceparent } : {}),
  } as Goal;
  await recordGoal(tx, row.id, goal, toStatus);
  await auditAction(tx, accountId, row, action, {
    fromStatus: row.status,
    toStatus,
    ...extra,
    ...auditExtra,
  });
  return toStatus;
}
