import type { Selectable } from 'kysely';
import { sql } from 'kysely';
import type { StoreDb } from '../store/open-store.ts';
import type { WebhookDeliveryTable } from '../store/schema.ts';

export type DeliveryRow = Selectable<WebhookDeliveryTable>;

/**
 * Claims up to `limit` due deliveries (pending or retrying, next attempt reached, lease free or
 * expired) for `owner` until the lease runs out. SKIP LOCKED lets several deliverers share a
 * store without waiting on each other; an expired lease (its process died mid-attempt) makes
 * the delivery claimable again, so it is retried with its event id: at least once.
 */
export async function claimDueDeliveries(
  db: StoreDb,
  owner: string,
  limit: number,
  leaseSeconds: number,
): Promise<DeliveryRow[]> {
  const result = await sql<DeliveryRow>`
    UPDATE webhook_deliveries
    SET lease_owner = ${owner}, lease_until = now() + make_interval(secs => ${leaseSeconds})
    WHERE id IN (
      SELECT id FROM webhook_deliveries
      WHERE status IN ('pending', 'retrying') AND next_attempt_at <= now()
        AND (lease_until IS NULL OR lease_until < now())
      ORDER BY next_attempt_at
      LIMIT ${limit}
      FOR UPDATE SKIP LOCKED
    )
    RETURNING *`.execute(db);
  return result.rows;
}
