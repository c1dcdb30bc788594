import { sql } from 'kysely';
import type { DatabaseStatus } from '../../domain/database-lifecycle.ts';
import type { Goal } from '../../domain/goal.ts';
import { claimById, claimNext } from '../jobs/claim-jobs.ts';
import { endDeadLocalLeases } from '../jobs/dead-local-leases.ts';
import type { JobQueue } from '../jobs/job-queue.ts';
import { release, renew } from '../jobs/lease-updates.ts';
import type { RetryPolicy } from '../jobs/retry-policy.ts';
import { type DatabaseRow, updateDatabaseRow } from './database-store.ts';
import type { StoreDb } from './open-store.ts';

/** How long a claim holds a database; a runner renews it while it works. */
export const LEASE_MS = 30_000;
export const LEASE_RENEW_MS = 10_000;

/**
 * A goal is never dead: its phase is recorded, and a step that failed unexpectedly (a store
 * hiccup) is tried again after 5 s, however often. Attempts are not counted.
 */
export const GOAL_RETRY: RetryPolicy = {
  maxAttempts: Number.POSITIVE_INFINITY,
  delayMs: () => 5000,
};

/** Databases with a goal, the one that has waited longest first. */
export const GOAL_QUEUE: JobQueue<'databases'> = {
  table: 'databases',
  waiting: sql<boolean>`goal IS NOT NULL AND deleted_at IS NULL`,
  order: sql`updated_at`,
};

/**
 * Claims the next database of GOAL_QUEUE and marks its goal claimed (`claimedAt`, after which
 * cancel-goal is refused) in the same statement.
 */
export async function claimGoal(db: StoreDb, owner: string): Promise<DatabaseRow | undefined> {
  const [database] = await claimNext(db, GOAL_QUEUE, owner, {
    leaseMs: LEASE_MS,
    changes: {
      goal: sql`CASE WHEN goal->>'claimedAt' IS NOT NULL THEN goal
               ELSE jsonb_set(goal, '{claimedAt}',
                 to_jsonb(to_char(now() AT TIME ZONE 'UTC', 'YYYY-MM-DD"T"HH24:MI:SS.MS"Z"')))
               END`,
    },
  });
  return database;
}

/**
 * Claims one database for work outside a goal (restarting its instance), only while it is
 * still `running` (or `failed` with its previous instance up) without a goal and nobody holds it.
 */
export function claimRunning(
  db: StoreDb,
  owner: string,
  databaseId: string,
): Promise<DatabaseRow | undefined> {
  return claimById(db, GOAL_QUEUE, owner, databaseId, {
    leaseMs: LEASE_MS,
    condition: sql<boolean>`status IN ('running', 'failed') AND goal IS NULL AND deleted_at IS NULL`,
  });
}

/** Extends our lease; false when it is no longer ours (it expired and another took it). */
export function renewLease(db: StoreDb, owner: string, databaseId: string): Promise<boolean> {
  return renew(db, GOAL_QUEUE, { id: databaseId, owner }, LEASE_MS);
}

/**
 * Gives the database back. `retryAfterMs` keeps it unclaimed that long (a goal waiting on a
 * build is looked at again then, not on every tick).
 */
export async function releaseLease(
  db: StoreDb,
  owner: string,
  databaseId: string,
  retryAfterMs = 0,
): Promise<void> {
  await release(db, GOAL_QUEUE, { id: databaseId, owner }, { retryAfterMs });
}

/**
 * Frees leases held by control-plane processes of this machine that are gone (killed), so
 * their goals resume now rather than when the lease runs out.
 */
export function freeDeadLocalLeases(db: StoreDb): Promise<number> {
  return endDeadLocalLeases(db, GOAL_QUEUE);
}

/** Records a goal, and the status the database shows while it waits, stamping `updated_at`. */
export async function recordGoal(
  db: StoreDb,
  databaseId: string,
  goal: Goal,
  status: DatabaseStatus,
): Promise<void> {
  await updateDatabaseRow(db, databaseId, { goal: JSON.stringify(goal), status });
}

/** Drops a goal nobody started, putting back the status it was queued from. */
export async function dropQueuedGoal(
  db: StoreDb,
  databaseId: string,
  fromStatus: string,
): Promise<void> {
  await updateDatabaseRow(db, databaseId, { goal: null, status: fromStatus });
}
