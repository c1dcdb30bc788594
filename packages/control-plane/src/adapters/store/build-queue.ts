import { type Selectable, sql } from 'kysely';
import { recordAudit } from '../events/audit-log.ts';
import { claimById, claimNext } from '../jobs/claim-jobs.ts';
import { endDeadLocalLeases } from '../jobs/dead-local-leases.ts';
import { type JobChanges, type JobQueue, LEASE_IS_FREE, type Lease } from '../jobs/job-queue.ts';
import { complete, release, renew } from '../jobs/lease-updates.ts';
import type { RetryPolicy } from '../jobs/retry-policy.ts';
import type { StoreDb } from './open-store.ts';
import type { BuildTable } from './schema.ts';

/** A builder that stops renewing its lease this long is counted as lost. */
export const BUILD_LEASE_MS = 30_000;

/**
 * A claim counts as an attempt, so a build whose builder was lost (crashed, lease ran out) is
 * claimed again at once, up to 3 attempts; then it fails with BUILDER_LOST_ERROR (the build
 * DLQ). A build that fails by itself is not retried: the same source fails the same way.
 */
export const BUILD_RETRY: RetryPolicy = { maxAttempts: 3, delayMs: () => 0 };
/** Attempts a build gets (`BUILD_RETRY`). */
export const MAX_BUILD_ATTEMPTS = BUILD_RETRY.maxAttempts;
export const BUILDER_LOST_ERROR = `builder lost ${MAX_BUILD_ATTEMPTS} times`;

/** Queued builds, oldest first, and builds whose builder was lost with attempts left. */
export const BUILD_QUEUE: JobQueue<'builds'> = {
  table: 'builds',
  waiting: sql<boolean>`(status = 'queued' OR (status = 'in_progress' AND attempts < ${MAX_BUILD_ATTEMPTS}))`,
  order: sql`created_at`,
};

export type BuildRow = Selectable<BuildTable>;

/** One claimed attempt of a build: who holds it, and which attempt it is. */
export interface BuildClaim {
  readonly build: BuildRow;
  readonly owner: string;
  readonly attempt: number;
}

/** The claim's lease: same holder, same attempt, still in progress. */
function leaseOf(claim: BuildClaim): Lease {
  return {
    id: claim.build.id,
    owner: claim.owner,
    held: sql<boolean>`attempts = ${claim.attempt} AND status = 'in_progress'`,
  };
}

/**
 * Fails the builds whose builder was lost MAX_BUILD_ATTEMPTS times (in progress, lease run
 * out, no attempts left) and records `build.failed` for each.
 */
export async function failLostBuilds(db: StoreDb): Promise<string[]> {
  return db.transaction().execute(async (tx) => {
    const { rows } = await sql<BuildRow>`
      UPDATE builds
         SET status = 'failed', error = ${BUILDER_LOST_ERROR}, finished_at = now(),
             lease_owner = NULL, lease_until = NULL
       WHERE status = 'in_progress' AND ${LEASE_IS_FREE} AND attempts >= ${MAX_BUILD_ATTEMPTS}
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

/** What a claim writes: the next attempt, in progress, started now, by `owner`. */
function claimChanges(owner: string): JobChanges<'builds'> {
  return {
    status: 'in_progress',
    attempts: sql`attempts + 1`,
    started_at: sql`now()`,
    finished_at: null,
    error: null,
    // The public job id names the builder process without its host name.
    builder_job_id: sql`'builder-' || left(md5(${owner}), 10) || '/' || (attempts + 1)`,
  };
}

/** Records `build.started` for a claimed build; the claim. */
async function started(tx: StoreDb, build: BuildRow, owner: string): Promise<BuildClaim> {
  await recordAudit(tx, {
    accountId: build.account_id,
    databaseId: build.database_id,
    entityType: 'build',
    entityId: build.id,
    eventType: 'build.started',
    payload: { attempt: build.attempts, builderJobId: build.builder_job_id },
  });
  return { build, owner, attempt: build.attempts };
}

/**
 * Claims the next build (BUILD_QUEUE) for `owner` as its next attempt, so any number of
 * builders on one store never claim the same build. Records `build.started`.
 */
export async function claimBuild(
  db: StoreDb,
  owner: string,
  leaseMs = BUILD_LEASE_MS,
): Promise<BuildClaim | undefined> {
  return db.transaction().execute(async (tx) => {
    const [build] = await claimNext(tx, BUILD_QUEUE, owner, {
      leaseMs,
      changes: claimChanges(owner),
    });
    return build ? started(tx, build, owner) : undefined;
  });
}

/**
 * Claims one build by id, as claimBuild would when it is its turn: only while it waits in the
 * queue (queued, or lost with attempts left) and nobody holds it. Records `build.started`.
 */
export async function claimBuildById(
  db: StoreDb,
  buildId: string,
  owner: string,
  leaseMs = BUILD_LEASE_MS,
): Promise<BuildClaim | undefined> {
  return db.transaction().execute(async (tx) => {
    const build = await claimById(tx, BUILD_QUEUE, owner, buildId, {
      leaseMs,
      condition: BUILD_QUEUE.waiting,
      changes: claimChanges(owner),
    });
    return build ? started(tx, build, owner) : undefined;
  });
}

/** Extends the claim's lease; false when the build is no longer this claim's (lease lost). */
export function renewBuildLease(
  db: StoreDb,
  claim: BuildClaim,
  leaseMs = BUILD_LEASE_MS,
): Promise<boolean> {
  return renew(db, BUILD_QUEUE, leaseOf(claim), leaseMs);
}

/** Puts a claimed build back in the queue without counting the attempt (graceful shutdown). */
export async function releaseBuild(db: StoreDb, claim: BuildClaim): Promise<void> {
  await release(db, BUILD_QUEUE, leaseOf(claim), {
    changes: {
      status: 'queued',
      attempts: claim.attempt - 1,
      started_at: null,
      builder_job_id: null,
    },
  });
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
  db: StoreDb,
  claim: BuildClaim,
  outcome: BuildOutcome,
): Promise<boolean> {
  return db.transaction().execute(async (tx) => {
    const held = await complete(tx, BUILD_QUEUE, leaseOf(claim), {
      status: outcome.status,
      finished_at: outcome.finishedAt,
      duration_seconds: outcome.durationSeconds,
      compute_type: outcome.computeType,
      cost_estimate_cents: outcome.costEstimateCents,
      image_uri: outcome.imageUri ?? null,
      artifact_hash: outcome.artifactHash ?? null,
      // Kept when the attempt compiled nothing (a failure).
      config_hash: outcome.configHash || undefined,
      error: outcome.error ?? null,
    });
    if (!held) return false;
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
export function expireDeadLocalBuildLeases(db: StoreDb): Promise<number> {
  return endDeadLocalLeases(db, BUILD_QUEUE);
}
