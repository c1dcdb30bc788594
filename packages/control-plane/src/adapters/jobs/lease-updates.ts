import { sql } from 'kysely';
import type { StoreDb } from '../store/open-store.ts';
import {
  assignments,
  fromNow,
  heldBy,
  type JobChanges,
  type JobQueue,
  type JobTable,
  type Lease,
} from './job-queue.ts';

/** Extends the lease; false when it is no longer held (it ran out and another process took it). */
export async function renew<T extends JobTable>(
  db: StoreDb,
  queue: JobQueue<T>,
  lease: Lease,
  leaseMs: number,
): Promise<boolean> {
  const { numAffectedRows } = await sql`
    UPDATE ${sql.table(queue.table)} SET lease_until = ${fromNow(leaseMs)}
     WHERE ${heldBy(lease)}`.execute(db);
  return Number(numAffectedRows ?? 0) > 0;
}

/**
 * Gives the job back unfinished, with `changes` (e.g. a build's status back to `queued`).
 * `retryAfterMs` keeps it unclaimed that long. False (and nothing written) when the lease is
 * no longer held.
 */
export async function release<T extends JobTable>(
  db: StoreDb,
  queue: JobQueue<T>,
  lease: Lease,
  options: { readonly retryAfterMs?: number; readonly changes?: JobChanges<T> } = {},
): Promise<boolean> {
  const retryAfterMs = options.retryAfterMs ?? 0;
  return endLease(db, queue, lease, options.changes ?? {}, retryAfterMs > 0 ? retryAfterMs : null);
}

/**
 * Records how the job's attempt ended (`changes`: its new state, a retry on its schedule or its
 * final state) and ends the lease. False (and nothing written) when the lease is no longer
 * held: the process that took the job over records its own outcome.
 */
export async function complete<T extends JobTable>(
  db: StoreDb,
  queue: JobQueue<T>,
  lease: Lease,
  changes: JobChanges<T>,
): Promise<boolean> {
  return endLease(db, queue, lease, changes, null);
}

async function endLease<T extends JobTable>(
  db: StoreDb,
  queue: JobQueue<T>,
  lease: Lease,
  changes: JobChanges<T>,
  waitMs: number | null,
): Promise<boolean> {
  const { numAffectedRows } = await sql`
    UPDATE ${sql.table(queue.table)}
       SET ${sql.join([
         ...assignments(changes),
         sql`lease_owner = NULL`,
         sql`lease_until = ${waitMs === null ? sql`NULL` : fromNow(waitMs)}`,
       ])}
     WHERE ${heldBy(lease)}`.execute(db);
  return Number(numAffectedRows ?? 0) > 0;
}
