import { randomUUID } from 'node:crypto';
import type { PlatformEventSink } from '../../adapters/events/platform-events.ts';
import { enqueueDeliveries, subscriptionsOf } from '../../adapters/store/webhook-records.ts';
import { MAX_ATTEMPTS } from './retry-schedule.ts';

/** A new event id: what receivers de-duplicate on; the same on every attempt. */
export function newEventId(): string {
  return `evt_${randomUUID()}`;
}

/**
 * The platform-event sink webhooks subscribe with (start-control-plane.ts): one delivery job
 * per subscription of the event's database that subscribes to its type, in the transaction
 * that records the event, so an event and its deliveries exist together or not at all. All
 * of them carry one event id and one body: the spec §6 payload.
 */
export const enqueueWebhookDeliveries: PlatformEventSink = async (db, event, payload) => {
  const subscriptions = await subscriptionsOf(db, event.databaseId);
  const subscribed = subscriptions.filter((row) => row.event_types.includes(event.type));
  if (subscribed.length === 0) return;
  const eventId = newEventId();
  const body = JSON.stringify(payload);
  await enqueueDeliveries(
    db,
    subscribed.map((row) => ({
      subscriptionId: row.id,
      accountId: row.account_id,
      databaseId: event.databaseId,
      eventId,
      eventType: event.type,
      body,
      maxAttempts: MAX_ATTEMPTS,
    })),
  );
};
