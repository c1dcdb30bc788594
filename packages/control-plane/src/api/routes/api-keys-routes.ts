import { Type } from 'typebox';
import { ownedDatabase } from '../../adapters/store/tenancy.ts';
import {
  ApiKey,
  CreateApiKeyBody,
  CreatedApiKey,
  DbParams,
  KeyParams,
} from '../../application/resources/api-keys/api-keys-schemas.ts';
import {
  createApiKey,
  deleteApiKey,
  listApiKeys,
} from '../../application/resources/api-keys/api-keys-service.ts';
import { ErrorResponse, errorResponses } from '../../application/resources/common-schemas.ts';
import type { ApiServer } from '../api-server.ts';
import type { ApiContext } from '../context.ts';

const tags = ['api-keys'];

/** Per-database instance API keys (spec §4.1.1); api-keys-service.ts says how keys work. */
export function registerApiKeysRoutes(app: ApiServer, { db, secrets }: ApiContext): void {
  app.get(
    '/databases/:dbId/api-keys',
    {
      schema: {
        tags,
        summary: "List a database's API keys",
        params: DbParams,
        response: { 200: Type.Array(ApiKey), 404: ErrorResponse, ...errorResponses() },
      },
    },
    async (request) => {
      const database = await ownedDatabase(db, request.principal.accountId, request.params.dbId);
      return listApiKeys(db, database);
    },
  );

  app.post(
    '/databases/:dbId/api-keys',
    {
      schema: {
        tags,
        summary: 'Create an API key; the key is in this response only',
        params: DbParams,
        body: CreateApiKeyBody,
        response: { 201: CreatedApiKey, 404: ErrorResponse, ...errorResponses() },
      },
    },
    async (request, reply) => {
      const { accountId } = request.principal;
      const database = await ownedDatabase(db, accountId, request.params.dbId);
      const created = await createApiKey(db, secrets, accountId, database, request.body);
      return reply.status(201).send(created);
    },
  );

  app.delete(
    '/databases/:dbId/api-keys/:keyId',
    {
      schema: {
        tags,
        summary: 'Delete an API key; the instance stops accepting it within a second or so',
        params: KeyParams,
        response: { 204: Type.Null(), 404: ErrorResponse, ...errorResponses() },
      },
    },
    async (request, reply) => {
      const { accountId } = request.principal;
      const database = await ownedDatabase(db, accountId, request.params.dbId);
      await deleteApiKey(db, accountId, database, request.params.keyId);
      return reply.status(204).send(null);
    },
  );
}
