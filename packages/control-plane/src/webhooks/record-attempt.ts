import { randomUUID } from 'node:crypto';
import { sql } from 'kysely';
import { recordAudit } from '../events/audit-log.ts';
import type { StoreDb } from '../store/open-store.ts';
import type { DeliveryRow } from './delivery-leases.ts';
import type { DeliveryStatus } from './delivery-status.ts';
import { retryDelayMs } from './retry-schedule.ts';
import type { WebhookResponse } from './send-webhook.ts';
import { TEST_EVENT_TYPE } from './webhook-event-types.ts';

/**
 * Writes one attempt's outcome: the attempt row (history) and the delivery's new state —
 * `delivered`, `retrying` with the next attempt on the schedule, or `failed` once the
 * attempts are used up (audited, except for test events). The state is only written while `owner`
 * still holds the lease: if it expired mid-attempt and another deliverer took the delivery,
 * that one's outcome counts (the attempt is still kept in the history).
 */
export async function recordAttempt(
  db: StoreDb,
  owner: string,
  delivery: DeliveryRow,
  attemptedAt: Date,
  response: WebhookResponse,
  retryScale: number,
): Promise<DeliveryStatus> {
  const attempts = delivery.attempt_count + 1;
  const status: DeliveryStatus = response.ok
    ? 'delivered'
    : attempts < delivery.max_attempts
      ? 'retrying'
      : 'failed';
  const delaySeconds = retryDelayMs(attempts, retryScale) / 1000;
  await db.transaction().execute(async (tx) => {
    const updated = await tx
      .updateTable('webhook_deliveries')
      .set({
        status,
        attempt_count: attempts,
        last_attempt_at: attemptedAt,
        last_status_code: response.statusCode,
        last_error: response.error,
        delivered_at: response.ok ? sql<Date>`now()` : null,
        next_attempt_at:
          status === 'retrying' ? sql<Date>`now() + make_interval(secs => ${delaySeconds})` : null,
        lease_owner: null,
        lease_until: null,
      })
      .where('id', '=', delivery.id)
      .where('lease_owner', '=', owner)
      .executeTakeFirst();
    const owned = Number(updated.numUpdatedRows) > 0;
    if (!owned) {
      // Deleted with its subscription meanwhile: nothing left to record it on.
      const exists = await tx
        .selectFrom('webhook_deliveries')
        .select('id')
        .where('id', '=', delivery.id)
        .executeTakeFirst();
      if (!exists) return;
    }
    await tx
      .insertInto('webhook_attempts')
      .values({
        id: randomUUID(),
        delivery_id: delivery.id,
        attempt: attempts,
        attempted_at: attemptedAt,
        duration_ms: response.durationMs,
        status_code: response.statusCode,
        error: response.error,
        succeeded: response.ok,
      })
      .execute();
    if (owned && status === 'failed' && delivery.event_type !== TEST_EVENT_TYPE) {
      await recordAudit(tx, {
        accountId: delivery.account_id,
        databaseId: delivery.database_id,
        entityType: 'webhook_delivery',
        entityId: delivery.id,
        eventType: 'webhook_delivery.failed',
        payload: {
          webhookId: delivery.subscription_id,
          eventId: delivery.event_id,
          eventType: delivery.event_type,
          attemptCount: attempts,
          lastStatusCode: response.statusCode,
          lastError: response.error,
        },
      });
    }
  });
  return status;
}
