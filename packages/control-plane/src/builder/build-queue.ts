import { type ExpressionBuilder, type Kysely, type Selectable, sql } from 'kysely';
import { recordAudit } from '../events/audit-log.ts';
import { ownerIsGoneLocally } from '../roles/lease-owner.ts';
import type { BuildTable, Store } from '../store/schema.ts';

/** A builder that stops renewing its lease this long is counted as lost. */
export const BUILD_LEASE_MS = 30_000;
/** Attempts a build gets; a build whose builder was lost this often fails (the build DLQ). */
export const MAX_BUILD_ATTEMPTS = 3;
export const BUILDER_LOST_ERROR = `builder lost ${MAX_BUILD_ATTEMPTS} times`;

export type BuildRow = Selectable<BuildTable>;

/** One claimed attempt of a build: who holds it, and which attempt it is. */
export interface BuildClaim {
  readonly build: BuildRow;
  readonly owner: string;
  readonly attempt: number;
}

/** The claim still holds its build: same holder, same attempt, still in progress. */
function stillHeld(claim: BuildClaim) {
  return (eb: ExpressionBuilder<Store, 'builds'>) =>
    eb.and({
      id: claim.build.id,
      lease_owner: claim.owner,
      attempts: claim.attempt,
      status: 'in_progress',
    });
}

/**
 * Fails the builds whose builder was lost MAX_BUILD_ATTEMPTS times (in progress, lease run
 * out, no attempts left) and records `build.failed` for each.
 */
export async function failLostBuilds(db: Kysely<Store>): Promise<string[]> {
  return db.transaction().execute(async (tx) => {
    const { rows } = await sql<BuildRow>`
      UPDATE builds
         SET status = 'failed', error = ${BUILDER_LOST_ERROR}, finished_at = now(),
             lease_owner = NULL, lease_until = NULL
       WHERE status = 'in_progress' AND lease_until < now() AND attempts >= ${MAX_BUILD_ATTEMPTS}
      RETURNING *`.execute(tx);
    for (const row of rows) {
      await recordAudit(tx, {
        accountId: row.account_id,
        databaseId: row.database_id,
        entityType: 'build',
        entityId: row.id,
        eventType: 'build.failed',
        payload: { error: BUILDER_LOST_ERROR, attempts: row.attempts },
      });
    }
    return rows.map((row) => row.id);
  });
}

/**
 * Claims the oldest build that is queued, or in progress under a lease that ran out (its
 * builder was lost), for `owner`: one statement, `FOR UPDATE SKIP LOCKED`, so any number of
 * builders on one store never claim the same build. Records `build.started`.
 */
export async function claimBuild(
  db: Kysely<Store>,
  owner: string,
  leaseMs = BUILD_LEASE_MS,
): Promise<BuildClaim | undefined> {
  return db.transaction().execute(async (tx) => {
    const { rows } = await sql<BuildRow>`
      UPDATE builds
         SET status = 'in_progress', lease_owner = ${owner},
             lease_until = now() + make_interval(secs => ${leaseMs / 1000}),
             attempts = attempts + 1, started_at = now(), finished_at = NULL, error = NULL,
             -- The public job id names the builder process without its host name.
             builder_job_id = 'builder-' || left(md5(${owner}), 10) || '/' || (attempts + 1)
       WHERE id = (
         SELECT id FROM builds
          WHERE status = 'queued' OR (status = 'in_progress' AND lease_until < now())
          ORDER BY created_at
          LIMIT 1
          FOR UPDATE SKIP LOCKED)
      RETURNING *`.execute(tx);
    const build = rows[0];
    if (!build) return undefined;
    await recordAudit(tx, {
      accountId: build.account_id,
      databaseId: build.database_id,
      entityType: 'build',
      entityId: build.id,
      eventType: 'build.started',
      payload: { attempt: build.attempts, builderJobId: build.builder_job_id },
    });
    return { build, owner, attempt: build.attempts };
  });
}

/** Extends the claim's lease; false when the build is no longer this claim's (lease lost). */
export async function renewBuildLease(
  db: Kysely<Store>,
  claim: BuildClaim,
  leaseMs = BUILD_LEASE_MS,
): Promise<boolean> {
  const { numAffectedRows } = await sql`
    UPDATE builds SET lease_until = now() + make_interval(secs => ${leaseMs / 1000})
     WHERE id = ${claim.build.id} AND lease_owner = ${claim.owner}
       AND attempts = ${claim.attempt} AND status = 'in_progress'`.execute(db);
  return Number(numAffectedRows ?? 0) > 0;
}

/** Puts a claimed build back in the queue without counting the attempt (graceful shutdown). */
export async function releaseBuild(db: Kysely<Store>, claim: BuildClaim): Promise<void> {
  await db
    .updateTable('builds')
    .set({
      status: 'queued',
      lease_owner: null,
      lease_until: null,
      attempts: claim.attempt - 1,
      started_at: null,
      builder_job_id: null,
    })
    .where(stillHeld(claim))
    .execute();
}

export interface BuildOutcome {
  readonly status: 'succeeded' | 'failed';
  readonly finishedAt: Date;
  readonly durationSeconds: number;
  readonly computeType: string;
  readonly costEstimateCents: number;
  readonly imageUri?: string;
  readonly artifactHash?: string;
  readonly configHash?: string;
  readonly error?: string;
}

/**
 * Records how the claim's attempt ended, with `build.succeeded` or `build.failed`; false (and
 * nothing written) when the build is no longer this claim's.
 */
export async function finishBuild(
  db: Kysely<Store>,
  claim: BuildClaim,
  outcome: BuildOutcome,
): Promise<boolean> {
  return db.transaction().execute(async (tx) => {
    const row = await tx
      .updateTable('builds')
      .set({
        status: outcome.status,
        finished_at: outcome.finishedAt,
        duration_seconds: outcome.durationSeconds,
        compute_type: outcome.computeType,
        cost_estimate_cents: outcome.costEstimateCents,
        image_uri: outcome.imageUri ?? null,
        artifact_hash: outcome.artifactHash ?? null,
        ...(outcome.configHash ? { config_hash: outcome.configHash } : {}),
        error: outcome.error ?? null,
        lease_owner: null,
        lease_until: null,
      })
      .where(stillHeld(claim))
      .returning(['id'])
      .executeTakeFirst();
    if (!row) return false;
    await recordAudit(tx, {
      accountId: claim.build.account_id,
      databaseId: claim.build.database_id,
      entityType: 'build',
      entityId: claim.build.id,
      eventType: outcome.status === 'succeeded' ? 'build.succeeded' : 'build.failed',
      payload:
        outcome.status === 'succeeded'
          ? { artifactHash: outcome.artifactHash, durationSeconds: outcome.durationSeconds }
          : { error: outcome.error, attempt: claim.attempt },
    });
    return true;
  });
}

/**
 * Ends the leases of builds held by builder processes of this machine that are gone (killed), so
 * another builder takes them over now rather than when the lease runs out.
 */
export async function expireDeadLocalBuildLeases(db: Kysely<Store>): Promise<number> {
  const owners = await db
    .selectFrom('builds')
    .select('lease_owner')
    .distinct()
    .where('status', '=', 'in_progress')
    .where('lease_owner', 'is not', null)
    .where('lease_until', '>', new Date())
    .execute();
  let expired = 0;
  for (const { lease_owner: owner } of owners) {
    if (owner === null || !ownerIsGoneLocally(owner)) continue;
    const result = await db
      .updateTable('builds')
      .set({ lease_until: new Date(0) })
      .where('status', '=', 'in_progress')
      .where('lease_owner', '=', owner)
      .executeTakeFirst();
    expired += Number(result.numUpdatedRows);
  }
  return expired;
}
