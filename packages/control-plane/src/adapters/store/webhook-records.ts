import { randomUUID } from 'node:crypto';
import { type Insertable, type Selectable, sql, type Updateable } from 'kysely';
import type { DeliveryStatus } from '../../application/webhook-delivery/delivery-status.ts';
import type { WebhookEventType } from '../../application/webhook-delivery/webhook-event-types.ts';
import type { StoreDb } from './open-store.ts';
import type {
  WebhookAttemptTable,
  WebhookDeliveryTable,
  WebhookSubscriptionTable,
} from './schema.ts';

/** Deliveries the history shows (spec §8: the last 50). */
export const DELIVERY_HISTORY_LIMIT = 50;
/** Attempts listed per delivery, newest first. */
export const ATTEMPTS_PER_DELIVERY = 20;

export function subscriptionRecord(row: Selectable<WebhookSubscriptionTable>) {
  return {
    id: row.id,
    databaseId: row.database_id,
    url: row.url,
    // Written only from the validated create body.
    eventTypes: row.event_types as WebhookEventType[],
    description: row.description,
    createdAt: row.created_at.toISOString(),
  };
}

type AttemptRow = Selectable<WebhookAttemptTable>;

/**
 * A delivery as the API shows it (spec §2 WebhookDelivery). Fields without a value (no
 * attempt yet, nothing scheduled, not delivered) are left out rather than null, as the spec
 * types them.
 */
export function deliveryRecord(row: Selectable<WebhookDeliveryTable>, attempts: AttemptRow[]) {
  return {
    id: row.id,
    subscriptionId: row.subscription_id,
    eventId: row.event_id,
    eventType: row.event_type,
    status: row.status as DeliveryStatus,
    attemptCount: row.attempt_count,
    ...(row.next_attempt_at ? { nextAttemptAt: row.next_attempt_at.toISOString() } : {}),
    ...(row.last_attempt_at ? { lastAttemptAt: row.last_attempt_at.toISOString() } : {}),
    ...(row.last_status_code !== null ? { lastStatusCode: row.last_status_code } : {}),
    ...(row.last_error !== null ? { lastError: row.last_error } : {}),
    ...(row.delivered_at ? { deliveredAt: row.delivered_at.toISOString() } : {}),
    createdAt: row.created_at.toISOString(),
    attempts: attempts.map((attempt) => ({
      attempt: attempt.attempt,
      attemptedAt: attempt.attempted_at.toISOString(),
      durationMs: attempt.duration_ms,
      ...(attempt.status_code !== null ? { statusCode: attempt.status_code } : {}),
      ...(attempt.error !== null ? { error: attempt.error } : {}),
      succeeded: attempt.succeeded,
    })),
  };
}

/** The API records of the given delivery rows, each with its latest attempts. */
export async function deliveryRecords(
  db: StoreDb,
  rows: Selectable<WebhookDeliveryTable>[],
): Promise<ReturnType<typeof deliveryRecord>[]> {
  if (rows.length === 0) return [];
  const attempts = await db
    .selectFrom('webhook_attempts')
    .selectAll()
    .where(
      'delivery_id',
      'in',
      rows.map((row) => row.id),
    )
    .orderBy('seq', 'desc')
    .execute();
  const byDelivery = new Map<string, AttemptRow[]>();
  for (const attempt of attempts) {
    const list = byDelivery.get(attempt.delivery_id) ?? [];
    if (list.length < ATTEMPTS_PER_DELIVERY) list.push(attempt);
    byDelivery.set(attempt.delivery_id, list);
  }
  return rows.map((row) => deliveryRecord(row, byDelivery.get(row.id) ?? []));
}

/** Where a subscription's deliveries go, and its sealed signing secret; undefined once deleted. */
export function subscriptionTarget(
  db: StoreDb,
  subscriptionId: string,
): Promise<{ url: string; secret_enc: string } | undefined> {
  return db
    .selectFrom('webhook_subscriptions')
    .select(['url', 'secret_enc'])
    .where('id', '=', subscriptionId)
    .executeTakeFirst();
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

/** A database's webhook subscriptions: who they are for and the event types they take. */
export function subscriptionsOf(db: StoreDb, databaseId: string) {
  return db
    .selectFrom('webhook_subscriptions')
    .select(['id', 'account_id', 'event_types'])
    .where('database_id', '=', databaseId)
    .execute();
}

export function insertSubscription(
  db: StoreDb,
  values: Insertable<WebhookSubscriptionTable>,
): Promise<Selectable<WebhookSubscriptionTable>> {
  return db
    .insertInto('webhook_subscriptions')
    .values(values)
    .returningAll()
    .executeTakeFirstOrThrow();
}

/** Deletes a subscription; its deliveries and their attempts go with it. */
export async function deleteSubscription(db: StoreDb, id: string): Promise<void> {
  await db.deleteFrom('webhook_subscriptions').where('id', '=', id).execute();
}

/** Locks one of a subscription's deliveries for the rest of the transaction. */
export function lockDelivery(
  db: StoreDb,
  subscriptionId: string,
  deliveryId: string,
): Promise<Selectable<WebhookDeliveryTable> | undefined> {
  return db
    .selectFrom('webhook_deliveries')
    .selectAll()
    .where('id', '=', deliveryId)
    .where('subscription_id', '=', subscriptionId)
    .forUpdate()
    .executeTakeFirst();
}

/** Makes a delivery due now with `changes`; the delivery as written. */
export function dueNow(
  db: StoreDb,
  id: string,
  changes: Updateable<WebhookDeliveryTable>,
): Promise<Selectable<WebhookDeliveryTable>> {
  return db
    .updateTable('webhook_deliveries')
    .set({ ...changes, next_attempt_at: sql<Date>`now()` })
    .where('id', '=', id)
    .returningAll()
    .executeTakeFirstOrThrow();
}

export async function deliveryExists(db: StoreDb, id: string): Promise<boolean> {
  const row = await db
    .selectFrom('webhook_deliveries')
    .select('id')
    .where('id', '=', id)
    .executeTakeFirst();
  return row !== undefined;
}

export async function insertAttempt(
  db: StoreDb,
  values: Insertable<WebhookAttemptTable>,
): Promise<void> {
  await db.insertInto('webhook_attempts').values(values).execute();
}
