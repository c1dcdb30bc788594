import { Type } from 'typebox';
import { ownedDatabase } from '../../adapters/store/tenancy.ts';
import {
  ErrorResponse,
  errorResponses,
  IdParams,
} from '../../application/resources/common-schemas.ts';
import {
  CreatedWebhook,
  CreateWebhookBody,
  DeliveryParams,
  Webhook,
  WebhookDelivery,
  WebhookParams,
} from '../../application/resources/webhooks/webhooks-schemas.ts';
import {
  createWebhook,
  deleteWebhook,
  listDeliveries,
  listWebhooks,
  retryDelivery,
  sendTestEvent,
} from '../../application/resources/webhooks/webhooks-service.ts';
import { TEST_EVENT_TYPE } from '../../application/webhook-delivery/webhook-event-types.ts';
import type { ApiServer } from '../api-server.ts';
import type { ApiContext } from '../context.ts';

const tags = ['webhooks'];

/** Webhook subscriptions of a database and their deliveries; webhooks-service.ts has the rules. */
export function registerWebhooksRoutes(app: ApiServer, context: ApiContext): void {
  const { db } = context;

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
      return listWebhooks(db, database);
    },
  );

  app.post(
    '/databases/:id/webhooks',
    {
      schema: {
        tags,
        summary: 'Subscribe an https URL to events; the signing secret is in this response only',
        params: IdParams,
        body: CreateWebhookBody,
        response: { 201: CreatedWebhook, 404: ErrorResponse, ...errorResponses(403, 409) },
      },
    },
    async (request, reply) => {
      const { accountId } = request.principal;
      const database = await ownedDatabase(db, accountId, request.params.id);
      const created = await createWebhook(context, accountId, database, request.body);
      return reply.status(201).send(created);
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
      await deleteWebhook(db, request.principal.accountId, request.params);
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
    async (request) => listDeliveries(db, request.principal.accountId, request.params),
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
      const record = await retryDelivery(db, request.principal.accountId, request.params);
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
      const record = await sendTestEvent(db, request.principal.accountId, request.params);
      return reply.status(202).send(record);
    },
  );
}
