import { randomUUID } from 'node:crypto';
import { recordAudit } from '../../adapters/events/audit-log.ts';
import { fromNow } from '../../adapters/jobs/job-queue.ts';
import { afterFailedAttempt } from '../../adapters/jobs/retry-policy.ts';
import { completeDelivery, type DeliveryRow } from '../../adapters/store/delivery-queue.ts';
import type { StoreDb } from '../../adapters/store/open-store.ts';
import { deliveryExists, insertAttempt } from '../../adapters/store/webhook-records.ts';
import type { DeliveryStatus } from './delivery-status.ts';
import { webhookRetryPolicy } from './retry-schedule.ts';
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
  // The delivery's own max_attempts: a retry by hand grants one more.
  const next = response.ok
    ? undefined
    : afterFailedAttempt(webhookRetryPolicy(retryScale), attempts, delivery.max_attempts);
  const status: DeliveryStatus = !next
    ? 'delivered'
    : next.kind === 'retry'
      ? 'retrying'
      : 'failed';
  await db.transaction().execute(async (tx) => {
    const owned = await completeDelivery(
      tx,
      { id: delivery.id, owner },
      {
        status,
        attempt_count: attempts,
        last_attempt_at: attemptedAt,
        last_status_code: response.statusCode,
        last_error: response.error,
        next_attempt_at: next?.kind === 'retry' ? fromNow(next.delayMs) : null,
      },
      response.ok,
    );
    if (!owned) {
      // Deleted with its subscription meanwhile: nothing left to record it on.
      if (!(await deliveryExists(tx, delivery.id))) return;
    }
    await insertAttempt(tx, {
      id: randomUUID(),
      delivery_id: delivery.id,
      attempt: attempts,
      attempted_at: attemptedAt,
      duration_ms: response.durationMs,
      status_code: response.statusCode,
      error: response.error,
      succeeded: response.ok,
    });
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
