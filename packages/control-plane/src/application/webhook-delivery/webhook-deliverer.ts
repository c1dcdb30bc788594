import { setTimeout as sleep } from 'node:timers/promises';
import { claimDueDeliveries, type DeliveryRow } from '../../adapters/store/delivery-queue.ts';
import { subscriptionTarget } from '../../adapters/store/webhook-records.ts';
import type { RoleContext, RunningRole } from '../../roles/role.ts';
import { recordAttempt } from './record-attempt.ts';
import { resolveWebhookTarget, WebhookTargetError } from './resolve-webhook-target.ts';
import { sendWebhook, type WebhookResponse } from './send-webhook.ts';
import { signWebhook, standardWebhooksHeaders } from './sign-webhook.ts';
import type { WebhookSettings } from './webhook-settings.ts';

/** Deliveries one process sends at once. */
const MAX_IN_FLIGHT = 16;
/** Lease beyond the request timeout: DNS, the store writes, a slow event loop. */
const LEASE_MARGIN_SECONDS = 30;

export const USER_AGENT = 'Replix-Webhooks/1';

/**
 * The webhook deliverer (run inside the reconciler role): every `pollIntervalMs` it claims due
 * deliveries under a lease and sends each — the SSRF check again, the POST to the checked
 * address, the outcome recorded with the next attempt on the retry schedule. Closing stops
 * claiming and waits for the attempts under way (each ends within the timeout).
 */
export async function startWebhookDeliverer(context: RoleContext): Promise<RunningRole> {
  const { db, log, secrets } = context;
  const settings: WebhookSettings = context.config.webhooks;
  const owner = `${context.processId}:webhooks`;
  const leaseSeconds = Math.ceil(settings.timeoutMs / 1000) + LEASE_MARGIN_SECONDS;
  const stopping = new AbortController();
  const inFlight = new Set<Promise<void>>();

  const attempt = async (delivery: DeliveryRow) => {
    const subscription = await subscriptionTarget(db, delivery.subscription_id);
    if (!subscription) return; // Deleted: its deliveries went with it.
    const attemptedAt = new Date();
    let response: WebhookResponse;
    try {
      const target = await resolveWebhookTarget(subscription.url, settings.allowLocal);
      const timestamp = Math.floor(Date.now() / 1000);
      const secret = secrets.open(subscription.secret_enc);
      response = await sendWebhook({
        target,
        body: delivery.body,
        timeoutMs: settings.timeoutMs,
        ca: settings.ca,
        headers: {
          'content-type': 'application/json',
          'user-agent': USER_AGENT,
          'x-service-event': delivery.event_type,
          'x-service-event-id': delivery.event_id,
          'x-service-signature': signWebhook(secret, timestamp, delivery.body),
          ...standardWebhooksHeaders(secret, delivery.event_id, timestamp, delivery.body),
        },
      });
    } catch (error) {
      if (!(error instanceof WebhookTargetError)) {
        log.error({ err: error, deliveryId: delivery.id }, 'webhook attempt could not be made');
      }
      response = {
        ok: false,
        statusCode: null,
        error:
          error instanceof WebhookTargetError
            ? `Not sent: ${error.message}`
            : 'Not sent: the delivery could not be prepared.',
        durationMs: 0,
      };
    }
    const status = await recordAttempt(
      db,
      owner,
      delivery,
      attemptedAt,
      response,
      settings.retryScale,
    );
    context.metrics?.recordDelivery(status);
    log.info(
      {
        deliveryId: delivery.id,
        eventId: delivery.event_id,
        eventType: delivery.event_type,
        attempt: delivery.attempt_count + 1,
        statusCode: response.statusCode,
        status,
      },
      'webhook attempt',
    );
  };

  const tick = async () => {
    const room = MAX_IN_FLIGHT - inFlight.size;
    if (room <= 0) return;
    for (const delivery of await claimDueDeliveries(db, owner, room, leaseSeconds)) {
      const work: Promise<void> = attempt(delivery)
        .catch((error: unknown) =>
          log.error({ err: error, deliveryId: delivery.id }, 'webhook attempt failed to record'),
        )
        .finally(() => inFlight.delete(work));
      inFlight.add(work);
    }
  };

  const loop = (async () => {
    while (!stopping.signal.aborted) {
      try {
        await tick();
      } catch (error) {
        log.error({ err: error }, 'webhook deliverer tick failed');
      }
      await sleep(settings.pollIntervalMs, undefined, { signal: stopping.signal }).catch(() => {});
    }
  })();

  return {
    async close() {
      stopping.abort();
      await loop;
      await Promise.allSettled([...inFlight]);
    },
  };
}
