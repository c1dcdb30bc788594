import { claimById, claimNext } from '../../adapters/jobs/claim-jobs.ts';
import { complete, release } from '../../adapters/jobs/lease-updates.ts';
import { afterFailedAttempt, type RetryPolicy } from '../../adapters/jobs/retry-policy.ts';
import type { DatabaseRow } from '../../adapters/store/database-store.ts';
import {
  dropLease,
  dropsWaitingOf,
  REPLICATION_DROP_QUEUE,
  type ReplicationSourceRow,
  requestReplicationDrop,
} from '../../adapters/store/replication-sources.ts';
import { MAX_REPLICAS } from '../../domain/plans.ts';
import type { RoleContext } from '../../roles/role.ts';
import { dropSourceState, reportStateLeft } from './replication-drop-steps.ts';

const MINUTE = 60_000;
const HOUR = 60 * MINUTE;

/**
 * The waits before each retry of a drop that failed (the first attempt is made at once): 7
 * attempts over about 20 hours, so a source down for a maintenance window or a night is
 * cleaned up all the same; then the state is left for an operator, audited and notified.
 */
export const DROP_RETRY_SCHEDULE_MS: readonly number[] = [
  MINUTE,
  5 * MINUTE,
  30 * MINUTE,
  2 * HOUR,
  6 * HOUR,
  12 * HOUR,
];

/** The drops' retry policy: the schedule above, scaled (REPLIX_REPLICATION_DROP_RETRY_SCALE). */
export function dropRetryPolicy(scale = 1): RetryPolicy {
  return {
    maxAttempts: DROP_RETRY_SCHEDULE_MS.length + 1,
    delayMs: (attemptsSoFar) => {
      const wait =
        DROP_RETRY_SCHEDULE_MS[Math.min(attemptsSoFar, DROP_RETRY_SCHEDULE_MS.length) - 1];
      return Math.round((wait ?? 0) * scale);
    },
  };
}

/** How long one attempt may hold a source: a connect timeout per replica, and margin. */
const DROP_LEASE_MS = (MAX_REPLICAS + 1) * 15_000;
/** Drops one reconciler pass starts at most. */
const DROPS_PER_PASS = 4;

type DropContext = Pick<RoleContext, 'db' | 'secrets' | 'log' | 'config'>;

/**
 * Drops what change data capture keeps on the source (the dialect's `replicationState`:
 * PostgreSQL's slot and publication) for the database's replicas from `fromOrdinal` up
 * (terminate: all; a resize down: the ones gone), on every source its instances were launched
 * on, with the settings they were launched with (`replication-sources.ts`): editing the
 * connection first moves nothing. The first attempt is made now; a failure does not hold up
 * the caller (an unreachable source must not block a terminate): the drop is a job retried by
 * the reconciler on `dropRetryPolicy` until it succeeds or is left to an operator.
 */
export async function dropReplicationState(
  context: DropContext,
  owner: string,
  database: DatabaseRow,
  fromOrdinal = 0,
): Promise<void> {
  await requestReplicationDrop(context.db, database, fromOrdinal, MAX_REPLICAS);
  const sources = await dropsWaitingOf(context.db, database.id);
  for (const { id } of sources) {
    const claimed = await claimById(context.db, REPLICATION_DROP_QUEUE, owner, id, {
      leaseMs: DROP_LEASE_MS,
      condition: REPLICATION_DROP_QUEUE.waiting,
    });
    if (claimed) await attemptDrop(context, owner, claimed);
  }
}

/** One reconciler pass's share of the due drops (retries, and drops a crash left unfinished). */
export async function dropDueReplicationState(context: DropContext, owner: string): Promise<void> {
  const due = await claimNext(context.db, REPLICATION_DROP_QUEUE, owner, {
    leaseMs: DROP_LEASE_MS,
    limit: DROPS_PER_PASS,
  });
  for (const source of due) await attemptDrop(context, owner, source);
}

/**
 * One attempt on a claimed source. Its outcome is written only while the request it claimed
 * still stands: one made meanwhile (a terminate after a resize) leaves it due again at once.
 */
async function attemptDrop(
  context: DropContext,
  owner: string,
  source: ReplicationSourceRow,
): Promise<void> {
  const from = source.drop_from;
  if (from === null) return;
  const lease = dropLease(source.id, owner, from);
  const error = await dropSourceState(context.secrets, source, from);
  const { db, log } = context;
  if (error === undefined) {
    const written = await complete(db, REPLICATION_DROP_QUEUE, lease, {
      replicas_launched: from,
      drop_from: null,
      drop_attempts: 0,
      drop_error: null,
      updated_at: new Date(),
    });
    if (!written) await release(db, REPLICATION_DROP_QUEUE, { id: source.id, owner });
    return;
  }
  const attempts = source.drop_attempts + 1;
  const next = afterFailedAttempt(
    dropRetryPolicy(context.config.replicationDropRetryScale),
    attempts,
  );
  log.warn(
    { databaseId: source.database_id, attempts, err: { message: error } },
    next.kind === 'retry'
      ? 'could not drop the source replication state; retrying'
      : 'could not drop the source replication state; left for an operator',
  );
  if (next.kind === 'retry') {
    const written = await release(db, REPLICATION_DROP_QUEUE, lease, {
      retryAfterMs: next.delayMs,
      changes: { drop_attempts: attempts, drop_error: error, updated_at: new Date() },
    });
    if (!written) await release(db, REPLICATION_DROP_QUEUE, { id: source.id, owner });
    return;
  }
  await db.transaction().execute(async (tx) => {
    const written = await complete(tx, REPLICATION_DROP_QUEUE, lease, {
      drop_attempts: attempts,
      drop_error: error,
      drop_failed_at: new Date(),
      updated_at: new Date(),
    });
    if (written) await reportStateLeft(tx, source, from, attempts, error);
    else await release(tx, REPLICATION_DROP_QUEUE, { id: source.id, owner });
  });
}
