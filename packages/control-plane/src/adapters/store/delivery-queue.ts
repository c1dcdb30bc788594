import type { Selectable } from 'kysely';
import { sql } from 'kysely';
import { claimNext } from '../jobs/claim-jobs.ts';
import type { JobChanges, JobQueue, Lease } from '../jobs/job-queue.ts';
import { complete } from '../jobs/lease-updates.ts';
import type { StoreDb } from './open-store.ts';
import type { WebhookDeliveryTable } from './schema.ts';

export type DeliveryRow = Selectable<WebhookDeliveryTable>;

/** Deliveries pending or retrying whose next attempt is due, the longest due first. */
export const DELIVERY_QUEUE: JobQueue<'webhook_deliveries'> = {
  table: 'webhook_deliveries',
  waiting: sql<boolean>`status IN ('pending', 'retrying') AND next_attempt_at <= now()`,
  order: sql`next_attempt_at`,
};

/**
 * Claims up to `limit` due deliveries for `owner` until the lease runs out. An expired lease
 * (its process died mid-attempt) makes the delivery claimable again, so it is retried with its
 * event id: at least once.
 */
export function claimDueDeliveries(
  db: StoreDb,
  owner: string,
  limit: number,
  leaseSeconds: number,
): Promise<DeliveryRow[]> {
  return claimNext(db, DELIVERY_QUEUE, owner, { leaseMs: leaseSeconds * 1000, limit });
}

/**
 * Ends an attempt under its lease with `changes`, stamped delivered now when it was; false
 * when the lease is no longer ours.
 */
export function completeDelivery(
  db: StoreDb,
  lease: Lease,
  changes: JobChanges<'webhook_deliveries'>,
  delivered: boolean,
): Promise<boolean> {
  return complete(db, DELIVERY_QUEUE, lease, {
    ...changes,
    delivered_at: delivered ? sql`now()` : null,
  });
}
