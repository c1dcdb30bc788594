import { randomUUID } from 'node:crypto';
import { deriveApiKey, newKeyId } from '@replix/instance';
import { sql } from 'kysely';
import { Type } from 'typebox';
import { notFound } from '../errors.ts';
import { recordAudit } from '../events/audit-log.ts';
import type { StoreDb } from '../store/open-store.ts';
import type { ApiKeyScope } from '../store/schema.ts';
import type { ApiServer } from './api-server.ts';
import { DateTime, ErrorResponse, errorResponses, iso, Uuid } from './common-schemas.ts';
import type { ApiContext } from './context.ts';
import { ownedDatabase } from './tenancy.ts';

const API_KEY_SCOPES = ['query', 'admin'] as const satisfies readonly ApiKeyScope[];

const Scope = Type.Enum([...API_KEY_SCOPES], {
  description:
    'What the key may do on the instance. `query`: run queries and read `/schema`; safe to ship to browsers and apps. `admin`: also reload, pause and resume replication, read metrics and health detail; keep it on servers, never in a browser.',
});

const ApiKey = Type.Object(
  {
    id: Uuid,
    keyId: Type.String({ description: 'The key id: 16 lowercase hex digits.' }),
    name: Type.String(),
    prefix: Type.String({ description: '`rxk_<keyId>`: the start of the key, to recognise it.' }),
    scope: Scope,
    createdAt: DateTime,
  },
  { $id: 'ApiKey', description: 'An instance API key; the key itself is never returned again.' },
);

const CreatedApiKey = Type.Object(
  {
    id: Uuid,
    keyId: Type.String(),
    name: Type.String(),
    prefix: Type.String(),
    scope: Scope,
    createdAt: DateTime,
    key: Type.String({
      description:
        'The whole key, `rxk_<keyId>.<hmac>`, for `Authorization: Bearer …` on the instance. Shown once.',
    }),
  },
  { $id: 'CreatedApiKey' },
);

const DbParams = Type.Object({ dbId: Uuid });
const KeyParams = Type.Object({ dbId: Uuid, keyId: Type.String({ minLength: 1, maxLength: 64 }) });

const tags = ['api-keys'];

/** Marks the database's key set changed, so the reconciler pushes it to the instance. */
async function bumpKeysVersion(tx: StoreDb, databaseId: string): Promise<void> {
  await tx
    .updateTable('databases')
    .set({ keys_version: sql<number>`keys_version + 1` })
    .where('id', '=', databaseId)
    .execute();
}

/**
 * Per-database instance API keys (spec §4.1.1). A key is `rxk_<keyId>.<hmac>`, derivable only
 * with the database's sealed key secret, so the store keeps just the key id. Every change bumps
 * `databases.keys_version`; the reconciler pushes the new key set to the running instance.
 */
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
      const rows = await db
        .selectFrom('api_keys')
        .selectAll()
        .where('database_id', '=', database.id)
        .orderBy('created_at', 'desc')
        .orderBy('id', 'desc')
        .execute();
      return rows.map((row) => ({
        id: row.id,
        keyId: row.key_id,
        name: row.name,
        prefix: `rxk_${row.key_id}`,
        scope: row.scope,
        createdAt: iso(row.created_at),
      }));
    },
  );

  app.post(
    '/databases/:dbId/api-keys',
    {
      schema: {
        tags,
        summary: 'Create an API key; the key is in this response only',
        params: DbParams,
        body: Type.Object(
          {
            name: Type.String({ minLength: 1, maxLength: 100 }),
            scope: Type.Optional(Type.Enum([...API_KEY_SCOPES], { description: 'Default query.' })),
          },
          { additionalProperties: false },
        ),
        response: { 201: CreatedApiKey, 404: ErrorResponse, ...errorResponses() },
      },
    },
    async (request, reply) => {
      const { accountId } = request.principal;
      const database = await ownedDatabase(db, accountId, request.params.dbId);
      const keyId = newKeyId();
      const key = deriveApiKey(secrets.openBuffer(database.key_secret_enc), keyId);
      const id = randomUUID();
      const createdAt = new Date();
      const { name } = request.body;
      const scope: ApiKeyScope = request.body.scope ?? 'query';
      await db.transaction().execute(async (tx) => {
        await tx
          .insertInto('api_keys')
          .values({
            id,
            database_id: database.id,
            account_id: accountId,
            key_id: keyId,
            name,
            scope,
            created_at: createdAt,
          })
          .execute();
        await bumpKeysVersion(tx, database.id);
        await recordAudit(tx, {
          accountId,
          databaseId: database.id,
          entityType: 'api_key',
          entityId: id,
          eventType: 'api_key.created',
          payload: { keyId, name, scope },
        });
      });
      return reply.status(201).send({
        id,
        keyId,
        name,
        prefix: `rxk_${keyId}`,
        scope,
        createdAt: createdAt.toISOString(),
        key,
      });
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
      const deleted = await db.transaction().execute(async (tx) => {
        const row = await tx
          .deleteFrom('api_keys')
          .where('database_id', '=', database.id)
          .where('key_id', '=', request.params.keyId)
          .returning(['id', 'key_id', 'name', 'scope'])
          .executeTakeFirst();
        if (!row) return undefined;
        await bumpKeysVersion(tx, database.id);
        await recordAudit(tx, {
          accountId,
          databaseId: database.id,
          entityType: 'api_key',
          entityId: row.id,
          eventType: 'api_key.deleted',
          payload: { keyId: row.key_id, name: row.name, scope: row.scope },
        });
        return row;
      });
      if (!deleted) throw notFound('API key');
      return reply.status(204).send(null);
    },
  );
}
