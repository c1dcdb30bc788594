import type { Selectable } from 'kysely';
import type { StoreDb } from '../../../adapters/store/open-store.ts';
import type { DatabaseTable, WebhookSubscriptionTable } from '../../../adapters/store/schema.ts';
import { ownedDatabase } from '../../../adapters/store/tenancy.ts';
import { DELIVERY_HISTORY_LIMIT } from '../../../adapters/store/webhook-records.ts';
import { notFound } from '../../../domain/errors.ts';

/** Which subscription of which database a request names (its route params). */
export interface SubscriptionRef {
  readonly id: string;
  readonly webhookId: string;
}

export interface OwnedSubscription {
  readonly database: Selectable<DatabaseTable>;
  readonly subscription: Selectable<WebhookSubscriptionTable>;
}

/** The subscription of the caller's database, or 404 (another account's is 404 too). */
export async function ownedSubscription(
  db: StoreDb,
  accountId: string,
  params: SubscriptionRef,
): Promise<OwnedSubscription> {
  const database = await ownedDatabase(db, accountId, params.id);
  const subscription = await db
    .selectFrom('webhook_subscriptions')
    .selectAll()
    .where('id', '=', params.webhookId)
    .where('database_id', '=', database.id)
    .executeTakeFirst();
  if (!subscription) throw notFound('Webhook');
  return { database, subscription };
}

/** A database's subscriptions, newest first. */
export function subscriptionsOf(db: StoreDb, databaseId: string) {
  return db
    .selectFrom('webhook_subscriptions')
    .selectAll()
    .where('database_id', '=', databaseId)
    .orderBy('created_at', 'desc')
    .orderBy('id', 'desc')
    .execute();
}

/** A subscription's latest deliveries, newest first. */
export function recentDeliveries(db: StoreDb, subscriptionId: string) {
  return db
    .selectFrom('webhook_deliveries')
    .selectAll()
    .where('subscription_id', '=', subscriptionId)
    .orderBy('created_at', 'desc')
    .orderBy('seq', 'desc')
    .limit(DELIVERY_HISTORY_LIMIT)
    .execute();
}

/** The subscriptions a database has. */
export async function subscriptionCount(db: StoreDb, databaseId: string): Promise<number> {
  const { count } = await db
    .selectFrom('webhook_subscriptions')
    .select((eb) => eb.fn.countAll<number>().as('count'))
    .where('database_id', '=', databaseId)
    .executeTakeFirstOrThrow();
  return Number(count);
}
