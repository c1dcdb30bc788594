import { Type } from 'typebox';
import {
  ErrorResponse,
  errorResponses,
  IdParams,
} from '../../application/resources/common-schemas.ts';
import {
  CreatedManagementKey,
  CreateManagementKeyBody,
  ManagementKey,
} from '../../application/resources/management-keys/management-keys-schemas.ts';
import {
  createManagementKey,
  listManagementKeys,
  revokeManagementKey,
} from '../../application/resources/management-keys/management-keys-service.ts';
import type { ApiServer } from '../api-server.ts';
import type { ApiContext } from '../context.ts';

const tags = ['management-keys'];

/** Long-lived `rmk_` keys that act for the user who made them (spec §5 rule 2). */
export function registerManagementKeysRoutes(app: ApiServer, { db }: ApiContext): void {
  app.get(
    '/management-keys',
    {
      schema: {
        tags,
        summary: "List the caller's management keys (not revoked)",
        response: { 200: Type.Array(ManagementKey), ...errorResponses() },
      },
    },
    async (request) => listManagementKeys(db, request.principal.accountId),
  );

  app.post(
    '/management-keys',
    {
      schema: {
        tags,
        summary: 'Create a management key; the key is in this response only',
        body: CreateManagementKeyBody,
        response: { 201: CreatedManagementKey, ...errorResponses() },
      },
    },
    async (request, reply) => {
      const created = await createManagementKey(db, request.principal, request.body.name);
      return reply.status(201).send(created);
    },
  );

  app.delete(
    '/management-keys/:id',
    {
      schema: {
        tags,
        summary: 'Revoke a management key; it stops working at once',
        params: IdParams,
        response: { 204: Type.Null(), 404: ErrorResponse, ...errorResponses() },
      },
    },
    async (request, reply) => {
      await revokeManagementKey(db, request.principal, request.params.id);
      return reply.status(204).send(null);
    },
  );
}
