import { type RawBuilder, sql } from 'kysely';
import type { StoreDb } from '../store/open-store.ts';
import {
  assignments,
  fromNow,
  type JobChanges,
  type JobQueue,
  type JobRow,
  type JobTable,
  LEASE_IS_FREE,
} from './job-queue.ts';

export interface ClaimOptions<T extends JobTable> {
  readonly leaseMs: number;
  /** Jobs claimed at most (the oldest first, by the queue's order). */
  readonly limit?: number;
  /** Written with the claim, in the same statement (e.g. a build's status and attempt). */
  readonly changes?: JobChanges<T>;
}

/**
 * Claims the first waiting jobs whose lease is free for `owner` until the lease runs out, in
 * one statement. `FOR UPDATE SKIP LOCKED` lets any number of processes share one store without
 * waiting on each other or claiming the same job.
 */
export async function claimNext<T extends JobTable>(
  db: StoreDb,
  queue: JobQueue<T>,
  owner: string,
  options: ClaimOptions<T>,
): Promise<JobRow<T>[]> {
  const table = sql.table(queue.table);
  const { rows } = await sql<JobRow<T>>`
    UPDATE ${table}
       SET ${sql.join([
         sql`lease_owner = ${owner}`,
         sql`lease_until = ${fromNow(options.leaseMs)}`,
         ...assignments(options.changes ?? {}),
       ])}
     WHERE id IN (
       SELECT id FROM ${table}
        WHERE ${queue.waiting} AND ${LEASE_IS_FREE}
        ORDER BY ${queue.order}
        LIMIT ${options.limit ?? 1}
        FOR UPDATE SKIP LOCKED)
    RETURNING *`.execute(db);
  return rows;
}

/**
 * Claims one named job for `owner` while `condition` holds and its lease is free: work on a
 * row outside its queue's order (e.g. restarting a database's instance).
 */
export async function claimById<T extends JobTable>(
  db: StoreDb,
  queue: JobQueue<T>,
  owner: string,
  id: string,
  options: {
    readonly leaseMs: number;
    readonly condition: RawBuilder<boolean>;
    /** Written with the claim, in the same statement. */
    readonly changes?: JobChanges<T>;
  },
): Promise<JobRow<T> | undefined> {
  const { rows } = await sql<JobRow<T>>`
    UPDATE ${sql.table(queue.table)}
       SET ${sql.join([
         sql`lease_owner = ${owner}`,
         sql`lease_until = ${fromNow(options.leaseMs)}`,
         ...assignments(options.changes ?? {}),
       ])}
     WHERE id = ${id} AND ${options.condition} AND ${LEASE_IS_FREE}
    RETURNING *`.execute(db);
  return rows[0];
}
