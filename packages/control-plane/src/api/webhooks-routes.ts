import { randomBytes, randomUUID } from 'node:crypto';
import { sql } from 'kysely';
import { Type } from 'typebox';
import { ApiError, notFound } from '../errors.ts';
import { recordAudit } from '../events/audit-log.ts';
import type { StoreDb } from '../store/open-store.ts';
import { DELIVERY_STATUSES } from '../webhooks/delivery-status.ts';
import { enqueueDeliveries, newEventId } from '../webhooks/enqueue-deliveries.ts';
import { resolveWebhookTarget, WebhookTargetError } from '../webhooks/resolve-webhook-target.ts';
import { TEST_EVENT_TYPE, WEBHOOK_EVENT_TYPES } from '../webhooks/webhook-event-types.ts';
import {
  DELIVERY_HISTORY_LIMIT,
  deliveryRecords,
  subscriptionRecord,
} from '../webhooks/webhook-records.ts';
import { webhookSettingsOf } from '../webhooks/webhook-settings-of.ts';
import type { ApiServer } from './api-server.ts';
import { DateTime, ErrorResponse, errorResponses, IdParams, Uuid } from './common-schemas.ts';
import type { ApiContext } from './context.ts';
import { ownedDatabase } from './tenancy.ts';

/** Subscriptions one database may have. */
export const MAX_SUBSCRIPTIONS_PER_DATABASE = 20;

const EventType = Type.Enum([...WEBHOOK_EVENT_TYPES], {
  description: 'A platform event of spec §6.',
});

const subscriptionFields = {
  id: Uuid,
  databaseId: Uuid,
  url: Type.String({ description: 'Where events are POSTed (https).' }),
  eventTypes: Type.Array(EventType),
  description: Type.Union([Type.String(), Type.Null()]),
  createdAt: DateTime,
};

const Webhook = Type.Object(subscriptionFields, {
  $id: 'Webhook',
  description:
    'A webhook subscription; `id` is the `webhookId`. The signing secret is never returned.',
});

const CreatedWebhook = Type.Object(
  {
    ...subscriptionFields,
    secret: Type.String({
      pattern: '^[0-9a-f]{64}$',
      description:
        'The signing secret: 32 random bytes as 64 lowercase hex digits. Shown once; only a sealed copy is kept.',
    }),
  },
  { $id: 'CreatedWebhook' },
);

const WebhookAttempt = Type.Object(
  {
    attempt: Type.Integer({ minimum: 1, description: 'Its number among the delivery’s attempts.' }),
    attemptedAt: DateTime,
    durationMs: Type.Integer(),
    statusCode: Type.Optional(Type.Integer({ description: 'The HTTP status the receiver gave.' })),
    error: Type.Optional(Type.String({ description: 'Why the attempt failed.' })),
    succeeded: Type.Boolean(),
  },
  { $id: 'WebhookAttempt' },
);

const WebhookDelivery = Type.Object(
  {
    id: Uuid,
    subscriptionId: Uuid,
    eventId: Type.String({
      description: '`evt_<uuid>`, sent as `X-Service-Event-Id`; the same on every attempt.',
    }),
    eventType: Type.String(),
    status: Type.Enum([...DELIVERY_STATUSES], {
      description:
        '`pending` (no attempt yet), `retrying` (an attempt failed; the next is at `nextAttemptAt`), `delivered`, `failed` (final).',
    }),
    attemptCount: Type.Integer(),
    nextAttemptAt: Type.Optional(DateTime),
    lastAttemptAt: Type.Optional(DateTime),
    lastStatusCode: Type.Optional(Type.Integer()),
    lastError: Type.Optional(Type.String()),
    deliveredAt: Type.Optional(DateTime),
    createdAt: DateTime,
    attempts: Type.Array(WebhookAttempt, {
      description: 'Its attempts, newest first (the latest 20).',
    }),
  },
  {
    $id: 'WebhookDelivery',
    description:
      'One event delivered to one subscription (spec §2 WebhookDelivery): its state after its latest attempt, and the attempts.',
  },
);

const WebhookParams = Type.Object({ id: Uuid, webhookId: Uuid });
const DeliveryParams = Type.Object({ id: Uuid, webhookId: Uuid, deliveryId: Uuid });

const tags = ['webhooks'];

/** The subscription of the caller's database, or 404 (another account's is 404 too). */
async function ownedSubscription(
  db: StoreDb,
  accountId: string,
  params: { readonly id: string; readonly webhookId: string },
) {
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

/**
 * Webhook subscriptions of a database (spec §4.1.2, §6), their delivery history, retry-now and
 * test events. Delivery itself is the deliverer's (webhooks/webhook-deliverer.ts);
 * docs/control-plane/webhooks.md documents the contract.
 */
export function registerWebhooksRoutes(app: ApiServer, context: ApiContext): void {
  const { db, secrets } = context;

  app.get(
    '/databases/:id/webhooks',
    {
      schema: {
        tags,
        summary: "List a database's webhook subscriptions, newest first",
        params: IdParams,
        response: { 200: Type.Array(Webhook), 404: ErrorResponse, ...errorResponses() },
      },
    },
    async (request) => {
      const database = await ownedDatabase(db, request.principal.accountId, request.params.id);
      const rows = await db
        .selectFrom('webhook_subscriptions')
        .selectAll()
        .where('database_id', '=', database.id)
        .orderBy('created_at', 'desc')
        .orderBy('id', 'desc')
        .execute();
      return rows.map(subscriptionRecord);
    },
  );

  app.post(
    '/databases/:id/webhooks',
    {
      schema: {
        tags,
        summary: 'Subscribe an https URL to events; the signing secret is in this response only',
        params: IdParams,
        body: Type.Object(
          {
            url: Type.String({ minLength: 1, maxLength: 2048 }),
            eventTypes: Type.Array(EventType, { minItems: 1, uniqueItems: true }),
            description: Type.Optional(Type.String({ maxLength: 500 })),
          },
          { additionalProperties: false },
        ),
        response: { 201: CreatedWebhook, 404: ErrorResponse, ...errorResponses(403, 409) },
      },
    },
    async (request, reply) => {
      const { accountId } = request.principal;
      const database = await ownedDatabase(db, accountId, request.params.id);
      let url: string;
      try {
        const target = await resolveWebhookTarget(
          request.body.url,
          webhookSettingsOf(context.config).allowLocal,
        );
        url = target.url.href;
      } catch (error) {
        if (error instanceof WebhookTargetError)
          throw new ApiError('validation_failed', error.message);
        throw error;
      }
      const id = randomUUID();
      const secret = randomBytes(32).toString('hex');
      const row = await db.transaction().execute(async (tx) => {
        // One at a time per database, so the count below cannot be raced past.
        await sql`SELECT id FROM databases WHERE id = ${database.id} FOR UPDATE`.execute(tx);
        const { count } = await tx
          .selectFrom('webhook_subscriptions')
          .select((eb) => eb.fn.countAll<number>().as('count'))
          .where('database_id', '=', database.id)
          .executeTakeFirstOrThrow();
        if (Number(count) >= MAX_SUBSCRIPTIONS_PER_DATABASE) {
          throw new ApiError(
            'conflict',
            `A database has at most ${MAX_SUBSCRIPTIONS_PER_DATABASE} webhook subscriptions; delete one first.`,
          );
        }
        const inserted = await tx
          .insertInto('webhook_subscriptions')
          .values({
            id,
            account_id: accountId,
            database_id: database.id,
            url,
            event_types: JSON.stringify(request.body.eventTypes),
            description: request.body.description ?? null,
            secret_enc: secrets.seal(secret),
          })
          .returningAll()
          .executeTakeFirstOrThrow();
        await recordAudit(tx, {
          accountId,
          databaseId: database.id,
          entityType: 'webhook',
          entityId: id,
          eventType: 'webhook.created',
          payload: { url, eventTypes: request.body.eventTypes },
        });
        return inserted;
      });
      return reply.status(201).send({ ...subscriptionRecord(row), secret });
    },
  );

  app.delete(
    '/databases/:id/webhooks/:webhookId',
    {
      schema: {
        tags,
        summary: 'Delete a webhook subscription, its pending deliveries and its history',
        params: WebhookParams,
        response: { 204: Type.Null(), 404: ErrorResponse, ...errorResponses(403) },
      },
    },
    async (request, reply) => {
      const { accountId } = request.principal;
      const { database, subscription } = await ownedSubscription(db, accountId, request.params);
      await db.transaction().execute(async (tx) => {
        await tx.deleteFrom('webhook_subscriptions').where('id', '=', subscription.id).execute();
        await recordAudit(tx, {
          accountId,
          databaseId: database.id,
          entityType: 'webhook',
          entityId: subscription.id,
          eventType: 'webhook.deleted',
          payload: { url: subscription.url },
        });
      });
      return reply.status(204).send(null);
    },
  );

  app.get(
    '/databases/:id/webhooks/:webhookId/deliveries',
    {
      schema: {
        tags,
        summary: "A subscription's last 50 deliveries, newest first",
        params: WebhookParams,
        response: { 200: Type.Array(WebhookDelivery), 404: ErrorResponse, ...errorResponses() },
      },
    },
    async (request) => {
      const { subscription } = await ownedSubscription(
        db,
        request.principal.accountId,
        request.params,
      );
      const rows = await db
        .selectFrom('webhook_deliveries')
        .selectAll()
        .where('subscription_id', '=', subscription.id)
        .orderBy('created_at', 'desc')
        .orderBy('seq', 'desc')
        .limit(DELIVERY_HISTORY_LIMIT)
        .execute();
      return deliveryRecords(db, rows);
    },
  );

  app.post(
    '/databases/:id/webhooks/:webhookId/deliveries/:deliveryId/retry',
    {
      schema: {
        tags,
        summary: 'Retry a delivery now (pending, retrying or failed; not a delivered one)',
        params: DeliveryParams,
        response: {
          202: WebhookDelivery,
          404: ErrorResponse,
          ...errorResponses(403, 409),
        },
      },
    },
    async (request, reply) => {
      const { accountId } = request.principal;
      const { database, subscription } = await ownedSubscription(db, accountId, request.params);
      const row = await db.transaction().execute(async (tx) => {
        const delivery = await tx
          .selectFrom('webhook_deliveries')
          .selectAll()
          .where('id', '=', request.params.deliveryId)
          .where('subscription_id', '=', subscription.id)
          .forUpdate()
          .executeTakeFirst();
        if (!delivery) throw notFound('Delivery');
        if (delivery.status === 'delivered') {
          throw new ApiError(
            'conflict',
            'This delivery succeeded already; send a test event to check the endpoint again.',
          );
        }
        // A failed delivery gets one more attempt; a scheduled one is simply brought forward.
        const updated = await tx
          .updateTable('webhook_deliveries')
          .set({
            status: delivery.status === 'failed' ? 'retrying' : delivery.status,
            max_attempts:
              delivery.status === 'failed' ? delivery.attempt_count + 1 : delivery.max_attempts,
            next_attempt_at: sql<Date>`now()`,
          })
          .where('id', '=', delivery.id)
          .returningAll()
          .executeTakeFirstOrThrow();
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
      return reply.status(202).send(record);
    },
  );

  app.post(
    '/databases/:id/webhooks/:webhookId/test',
    {
      schema: {
        tags,
        summary: `Send a test event (\`${TEST_EVENT_TYPE}\`) to the subscription`,
        params: WebhookParams,
        response: { 202: WebhookDelivery, 404: ErrorResponse, ...errorResponses(403) },
      },
    },
    async (request, reply) => {
      const { accountId } = request.principal;
      const { database, subscription } = await ownedSubscription(db, accountId, request.params);
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
      return reply.status(202).send(record);
    },
  );
}
