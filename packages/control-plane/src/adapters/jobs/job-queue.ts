import { type RawBuilder, type Selectable, sql, type Updateable } from 'kysely';
import type { Store } from '../store/schema.ts';

/**
 * The tables whose rows are jobs. A job is the resource row itself (a build, a database with a
 * goal, a webhook delivery, a source whose replication state is to be dropped), so its state is what the API shows; the lease is two columns on
 * it: `lease_owner` (the process id of the holder) and `lease_until`.
 */
export type JobTable = 'builds' | 'databases' | 'webhook_deliveries' | 'replication_sources';

export type JobRow<T extends JobTable> = Selectable<Store[T]>;

/** Column changes written with a lease statement: values, or SQL such as `now()`. */
export type JobChanges<T extends JobTable> = {
  readonly [K in keyof Updateable<Store[T]>]?: Updateable<Store[T]>[K] | RawBuilder<unknown>;
};

/** One kind of job: where its rows are, which of them have work to do, and in what order. */
export interface JobQueue<T extends JobTable> {
  readonly table: T;
  /** The rows with work to do, whatever their lease. */
  readonly waiting: RawBuilder<boolean>;
  /** Which waiting row is claimed first. */
  readonly order: RawBuilder<unknown>;
}

/** A held claim on one job. */
export interface Lease {
  readonly id: string;
  readonly owner: string;
  /** Narrows the hold further, e.g. to one attempt of a build. */
  readonly held?: RawBuilder<boolean>;
}

/**
 * Nobody holds the job: never leased, given back, or its holder stopped renewing (a crashed
 * process). A lease given back with a delay keeps `lease_until` in the future and no owner,
 * so the job waits until then.
 */
export const LEASE_IS_FREE = sql<boolean>`(lease_until IS NULL OR lease_until < now())`;

/** `now()` plus `ms`: the end of a lease taken or renewed now, or of a wait. */
export function fromNow(ms: number): RawBuilder<Date> {
  return sql<Date>`now() + make_interval(secs => ${ms / 1000})`;
}

/** The `lease.id`, `lease.owner` (and `lease.held`) condition. */
export function heldBy(lease: Lease): RawBuilder<boolean> {
  const held = sql<boolean>`id = ${lease.id} AND lease_owner = ${lease.owner}`;
  return lease.held ? sql<boolean>`${held} AND ${lease.held}` : held;
}

/** `column = value, …` for an UPDATE; columns left `undefined` are not written. */
export function assignments<T extends JobTable>(changes: JobChanges<T>): RawBuilder<unknown>[] {
  return Object.entries(changes)
    .filter(([, value]) => value !== undefined)
    .map(([column, value]) => sql`${sql.ref(column)} = ${value}`);
}
