import { Type } from 'typebox';
import { DELIVERY_STATUSES } from '../../webhook-delivery/delivery-status.ts';
import { WEBHOOK_EVENT_TYPES } from '../../webhook-delivery/webhook-event-types.ts';
import { DateTime, Uuid } from '../common-schemas.ts';

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

export const Webhook = Type.Object(subscriptionFields, {
  $id: 'Webhook',
  description:
    'A webhook subscription; `id` is the `webhookId`. The signing secret is never returned.',
});

export const CreatedWebhook = Type.Object(
  {
    ...subscriptionFields,
    secret: Type.String({
      pattern: '^[0-9a-f]{64}$',
      description:
        'The signing secret: 32 random bytes as 64 lowercase hex digits. Shown once; only a sealed copy is kept.',
    }),
    standardWebhooksSecret: Type.String({
      pattern: '^whsec_[A-Za-z0-9+/]{43}=$',
      description:
        'The same secret in its Standard Webhooks form: `whsec_` and the 32 bytes in base64, for verifying the `webhook-signature` header with a Standard Webhooks library. Shown once.',
    }),
  },
  { $id: 'CreatedWebhook' },
);

export const CreateWebhookBody = Type.Object(
  {
    url: Type.String({ minLength: 1, maxLength: 2048 }),
    eventTypes: Type.Array(EventType, { minItems: 1, uniqueItems: true }),
    description: Type.Optional(Type.String({ maxLength: 500 })),
  },
  { additionalProperties: false },
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

export const WebhookDelivery = Type.Object(
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

export const WebhookParams = Type.Object({ id: Uuid, webhookId: Uuid });
export const DeliveryParams = Type.Object({ id: Uuid, webhookId: Uuid, deliveryId: Uuid });
