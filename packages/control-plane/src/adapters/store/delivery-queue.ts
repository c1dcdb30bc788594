import type { Selectable } from 'kysely';
import { sql } from 'kysely';
import { claimNext } from '../jobs/claim-jobs.ts';
import type { JobQueue } from '../jobs/job-queue.ts';
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
