/**
 * Webhook subscriptions of a database (spec §4.1.2, §6), their delivery history, retry-now and
 * test events. Delivery itself is the deliverer's (webhooks/webhook-deliverer.ts);
 * docs/control-plane/webhooks.md documents the contract.
 */
import { randomBytes, randomUUID } from 'node:crypto';
import type { Selectable } from 'kysely';
import type { Static } from 'typebox';
import { recordAudit } from '../../../adapters/events/audit-log.ts';
import { lockDatabaseRowById } from '../../../adapters/store/database-store.ts';
import type { StoreDb } from '../../../adapters/store/open-store.ts';
import type { DatabaseTable } from '../../../adapters/store/schema.ts';
import {
  deleteSubscription,
  deliveryRecords,
  dueNow,
  enqueueDeliveries,
  insertSubscription,
  lockDelivery,
  subscriptionRecord,
} from '../../../adapters/store/webhook-records.ts';
import type { ApiContext } from '../../../api/context.ts';
import { ApiError, notFound } from '../../../domain/errors.ts';
import { newEventId } from '../../webhook-delivery/enqueue-deliveries.ts';
import {
  resolveWebhookTarget,
  WebhookTargetError,
} from '../../webhook-delivery/resolve-webhook-target.ts';
import { standardWebhooksSecret } from '../../webhook-delivery/sign-webhook.ts';
import { TEST_EVENT_TYPE } from '../../webhook-delivery/webhook-event-types.ts';
import {
  ownedSubscription,
  recentDeliveries,
  type SubscriptionRef,
  subscriptionCount,
  subscriptionsOf,
} from './webhooks-queries.ts';
import type { CreateWebhookBody } from './webhooks-schemas.ts';

/** Subscriptions one database may have. */
export const MAX_SUBSCRIPTIONS_PER_DATABASE = 20;

type Database = Selectable<DatabaseTable>;

export async function listWebhooks(db: StoreDb, database: Database) {
  return (await subscriptionsOf(db, database.id)).map(subscriptionRecord);
}

/**
 * Subscribes a checked https address; the signing secret is sealed in the store and answered
 * this once.
 */
export async function createWebhook(
  { db, secrets, config }: Pick<ApiContext, 'db' | 'secrets' | 'config'>,
  accountId: string,
  database: Database,
  body: Static<typeof CreateWebhookBody>,
) {
  let url: string;
  try {
    const target = await resolveWebhookTarget(body.url, config.webhooks.allowLocal);
    url = target.url.href;
  } catch (error) {
    if (error instanceof WebhookTargetError) throw new ApiError('validation_failed', error.message);
    throw error;
  }
  const id = randomUUID();
  const secret = randomBytes(32).toString('hex');
  const row = await db.transaction().execute(async (tx) => {
    // One at a time per database, so the count below cannot be raced past.
    await lockDatabaseRowById(tx, database.id);
    if ((await subscriptionCount(tx, database.id)) >= MAX_SUBSCRIPTIONS_PER_DATABASE) {
      throw new ApiError(
        'conflict',
        `A database has at most ${MAX_SUBSCRIPTIONS_PER_DATABASE} webhook subscriptions; delete one first.`,
      );
    }
    const inserted = await insertSubscription(tx, {
      id,
      account_id: accountId,
      database_id: database.id,
      url,
      event_types: JSON.stringify(body.eventTypes),
      description: body.description ?? null,
      secret_enc: secrets.seal(secret),
    });
    await recordAudit(tx, {
      accountId,
      databaseId: database.id,
      entityType: 'webhook',
      entityId: id,
      eventType: 'webhook.created',
      payload: { url, eventTypes: body.eventTypes },
    });
    return inserted;
  });
  return {
    ...subscriptionRecord(row),
    secret,
    standardWebhooksSecret: standardWebhooksSecret(secret),
  };
}

/** Deletes the subscription; its deliveries and their history go with it. */
export async function deleteWebhook(
  db: StoreDb,
  accountId: string,
  ref: SubscriptionRef,
): Promise<void> {
  const { database, subscription } = await ownedSubscription(db, accountId, ref);
  await db.transaction().execute(async (tx) => {
    await deleteSubscription(tx, subscription.id);
    await recordAudit(tx, {
      accountId,
      databaseId: database.id,
      entityType: 'webhook',
      entityId: subscription.id,
      eventType: 'webhook.deleted',
      payload: { url: subscription.url },
    });
  });
}

export async function listDeliveries(db: StoreDb, accountId: string, ref: SubscriptionRef) {
  const { subscription } = await ownedSubscription(db, accountId, ref);
  return deliveryRecords(db, await recentDeliveries(db, subscription.id));
}

/** Brings a delivery's next attempt forward to now; a failed one gets one more attempt. */
export async function retryDelivery(
  db: StoreDb,
  accountId: string,
  ref: SubscriptionRef & { readonly deliveryId: string },
) {
  const { database, subscription } = await ownedSubscription(db, accountId, ref);
  const row = await db.transaction().execute(async (tx) => {
    const delivery = await lockDelivery(tx, subscription.id, ref.deliveryId);
    if (!delivery) throw notFound('Delivery');
    if (delivery.status === 'delivered') {
      throw new ApiError(
        'conflict',
        'This delivery succeeded already; send a test event to check the endpoint again.',
      );
    }
    // A failed delivery gets one more attempt; a scheduled one is simply brought forward.
    const updated = await dueNow(tx, delivery.id, {
      status: delivery.status === 'failed' ? 'retrying' : delivery.status,
      max_attempts:
        delivery.status === 'failed' ? delivery.attempt_count + 1 : delivery.max_attempts,
    });
    await recordAudit(tx, {
      accountId,
      databaseId: database.id,
      entityType: 'webhook_delivery',
      entityId: delivery.id,
      eventType: 'webhook_delivery.retried',
      payload: {
        webhookId: subscription.id,
        eventId: delivery.event_id,
        fromStatus: delivery.status,
      },
    });
    return updated;
  });
  const [record] = await deliveryRecords(db, [row]);
  return record;
}

/** Queues one `webhook.test` delivery to the subscription. */
export async function sendTestEvent(db: StoreDb, accountId: string, ref: SubscriptionRef) {
  const { database, subscription } = await ownedSubscription(db, accountId, ref);
  const eventId = newEventId();
  const body = JSON.stringify({
    databaseId: database.id,
    databaseName: database.name,
    webhookId: subscription.id,
    timestamp: new Date().toISOString(),
  });
  const row = await db.transaction().execute(async (tx) => {
    const [delivery] = await enqueueDeliveries(tx, [
      {
        subscriptionId: subscription.id,
        accountId,
        databaseId: database.id,
        eventId,
        eventType: TEST_EVENT_TYPE,
        body,
        // A test is one attempt; retry-now gives it another.
        maxAttempts: 1,
      },
    ]);
    await recordAudit(tx, {
      accountId,
      databaseId: database.id,
      entityType: 'webhook',
      entityId: subscription.id,
      eventType: 'webhook.tested',
      payload: { eventId },
    });
    return delivery;
  });
  const [record] = await deliveryRecords(db, row ? [row] : []);
  return record;
}
