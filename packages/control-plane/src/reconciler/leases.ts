import type { Selectable } from 'kysely';
import { sql } from 'kysely';
import { ownerIsGoneLocally } from '../roles/lease-owner.ts';
import type { StoreDb } from '../store/open-store.ts';
import type { DatabaseTable } from '../store/schema.ts';

/** How long a claim holds a database; a runner renews it while it works. */
export const LEASE_SECONDS = 30;
export const LEASE_RENEW_MS = 10_000;

export type DatabaseRow = Selectable<DatabaseTable>;

/**
 * Claims the database with a goal that has waited longest and whose lease is free, and marks
 * the goal claimed (`claimedAt`, after which cancel-goal is refused) in the same statement.
 * SKIP LOCKED lets several reconcilers share one store without waiting on each other.
 */
export async function claimGoal(db: StoreDb, owner: string): Promise<DatabaseRow | undefined> {
  const result = await sql<DatabaseRow>`
    UPDATE databases
    SET lease_owner = ${owner},
        lease_until = now() + make_interval(secs => ${LEASE_SECONDS}),
        goal = CASE WHEN goal->>'claimedAt' IS NOT NULL THEN goal
               ELSE jsonb_set(goal, '{claimedAt}',
                 to_jsonb(to_char(now() AT TIME ZONE 'UTC', 'YYYY-MM-DD"T"HH24:MI:SS.MS"Z"')))
               END
    WHERE id = (
      SELECT id FROM databases
      WHERE goal IS NOT NULL AND deleted_at IS NULL
        AND (lease_until IS NULL OR lease_until < now())
      ORDER BY updated_at
      LIMIT 1
      FOR UPDATE SKIP LOCKED
    )
    RETURNING *`.execute(db);
  return result.rows[0];
}

/**
 * Claims one database for work outside a goal (restarting its instance), only while it is
 * still `running` (or `failed` with its previous instance up) without a goal and nobody holds it.
 */
export async function claimRunning(
  db: StoreDb,
  owner: string,
  databaseId: string,
): Promise<DatabaseRow | undefined> {
  const result = await sql<DatabaseRow>`
    UPDATE databases
    SET lease_owner = ${owner}, lease_until = now() + make_interval(secs => ${LEASE_SECONDS})
    WHERE id = ${databaseId} AND status IN ('running', 'failed') AND goal IS NULL
      AND deleted_at IS NULL
      AND (lease_until IS NULL OR lease_until < now())
    RETURNING *`.execute(db);
  return result.rows[0];
}

/** Extends our lease; false when it is no longer ours (it expired and another took it). */
export async function renewLease(db: StoreDb, owner: string, databaseId: string): Promise<boolean> {
  const result = await sql`
    UPDATE databases SET lease_until = now() + make_interval(secs => ${LEASE_SECONDS})
    WHERE id = ${databaseId} AND lease_owner = ${owner}`.execute(db);
  return Number(result.numAffectedRows ?? 0) > 0;
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
  await sql`
    UPDATE databases
    SET lease_owner = NULL,
        lease_until = ${retryAfterMs > 0 ? sql`now() + make_interval(secs => ${retryAfterMs / 1000})` : sql`NULL`}
    WHERE id = ${databaseId} AND lease_owner = ${owner}`.execute(db);
}

/** `<host>:<pid>:<random>[:<role>]`: the process ids startControlPlane makes, plus the role. */
/**
 * Frees leases held by control-plane processes of this machine that are gone (killed), so
 * their goals resume now rather than when the lease runs out. Owners on other machines are
 * left to expire.
 */
export async function freeDeadLocalLeases(db: StoreDb): Promise<number> {
  const owners = await db
    .selectFrom('databases')
    .select('lease_owner')
    .distinct()
    .where('lease_owner', 'is not', null)
    .where('lease_until', '>', new Date())
    .execute();
  let freed = 0;
  for (const { lease_owner: owner } of owners) {
    if (owner === null) continue;
    if (!ownerIsGoneLocally(owner)) continue;
    const result = await db
      .updateTable('databases')
      .set({ lease_owner: null, lease_until: null })
      .where('lease_owner', '=', owner)
      .executeTakeFirst();
    freed += Number(result.numUpdatedRows);
  }
  return freed;
}
