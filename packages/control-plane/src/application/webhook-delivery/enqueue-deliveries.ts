import { randomUUID } from 'node:crypto';
import { sql } from 'kysely';
import type { PlatformEventSink } from '../../adapters/events/platform-events.ts';
import type { StoreDb } from '../../adapters/store/open-store.ts';
import { MAX_ATTEMPTS } from './retry-schedule.ts';

/** A new event id: what receivers de-duplicate on; the same on every attempt. */
export function newEventId(): string {
  return `evt_${randomUUID()}`;
}

export interface DeliveryJob {
  readonly subscriptionId: string;
  readonly accountId: string;
  readonly databaseId: string;
  readonly eventId: string;
  readonly eventType: string;
  /** The exact bytes to send and sign. */
  readonly body: string;
  readonly maxAttempts: number;
}

/** Records delivery jobs, due at once; returns their ids. Pass the event's transaction. */
export async function enqueueDeliveries(db: StoreDb, jobs: readonly DeliveryJob[]) {
  if (jobs.length === 0) return [];
  const rows = await db
    .insertInto('webhook_deliveries')
    .values(
      jobs.map((job) => ({
        id: randomUUID(),
        subscription_id: job.subscriptionId,
        account_id: job.accountId,
        database_id: job.databaseId,
        event_id: job.eventId,
        event_type: job.eventType,
        body: job.body,
        status: 'pending',
        max_attempts: job.maxAttempts,
        next_attempt_at: sql<Date>`now()`,
      })),
    )
    .returningAll()
    .execute();
  return rows;
}

/**
 * The platform-event sink webhooks subscribe with (start-control-plane.ts): one delivery job
 * per subscription of the event's database that subscribes to its type, in the transaction
 * that records the event, so an event and its deliveries exist together or not at all. All
 * of them carry one event id and one body: the spec §6 payload.
 */
export const enqueueWebhookDeliveries: PlatformEventSink = async (db, event, payload) => {
  const subscriptions = await db
    .selectFrom('webhook_subscriptions')
    .select(['id', 'account_id', 'event_types'])
    .where('database_id', '=', event.databaseId)
    .execute();
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
