import { randomUUID } from 'node:crypto';
import { Type } from 'typebox';
import { newManagementKey } from '../auth/management-keys.ts';
import { notFound } from '../errors.ts';
import { recordAudit } from '../events/audit-log.ts';
import type { ApiServer } from './api-server.ts';
import { DateTime, ErrorResponse, errorResponses, IdParams, iso, Uuid } from './common-schemas.ts';
import type { ApiContext } from './context.ts';

const ManagementKey = Type.Object(
  {
    id: Uuid,
    name: Type.String(),
    prefix: Type.String({ description: 'The first characters of the key, to recognise it.' }),
    createdAt: DateTime,
    lastUsedAt: Type.Union([DateTime, Type.Null()]),
  },
  { $id: 'ManagementKey' },
);

const CreatedManagementKey = Type.Object(
  {
    id: Uuid,
    name: Type.String(),
    prefix: Type.String(),
    createdAt: DateTime,
    lastUsedAt: Type.Null(),
    key: Type.String({ description: 'The whole key, `rmk_…`. Shown once; only its hash is kept.' }),
  },
  { $id: 'CreatedManagementKey' },
);

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
    async (request) => {
      const rows = await db
        .selectFrom('management_keys')
        .selectAll()
        .where('account_id', '=', request.principal.accountId)
        .where('revoked_at', 'is', null)
        .orderBy('created_at', 'desc')
        .execute();
      return rows.map((row) => ({
        id: row.id,
        name: row.name,
        prefix: row.prefix,
        createdAt: iso(row.created_at),
        lastUsedAt: iso(row.last_used_at),
      }));
    },
  );

  app.post(
    '/management-keys',
    {
      schema: {
        tags,
        summary: 'Create a management key; the key is in this response only',
        body: Type.Object(
          { name: Type.String({ minLength: 1, maxLength: 100 }) },
          { additionalProperties: false },
        ),
        response: { 201: CreatedManagementKey, ...errorResponses() },
      },
    },
    async (request, reply) => {
      const { key, prefix, hash } = newManagementKey();
      const id = randomUUID();
      const createdAt = new Date();
      const { accountId, userId } = request.principal;
      await db.transaction().execute(async (tx) => {
        await tx
          .insertInto('management_keys')
          .values({
            id,
            account_id: accountId,
            user_id: userId,
            name: request.body.name,
            prefix,
            key_hash: hash,
            created_at: createdAt,
          })
          .execute();
        await recordAudit(tx, {
          accountId,
          entityType: 'management_key',
          entityId: id,
          eventType: 'management_key.created',
          payload: { name: request.body.name, prefix },
        });
      });
      return reply.status(201).send({
        id,
        name: request.body.name,
        prefix,
        createdAt: createdAt.toISOString(),
        lastUsedAt: null,
        key,
      });
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
      const { accountId, role, userId } = request.principal;
      const revoked = await db.transaction().execute(async (tx) => {
        let revoke = tx
          .updateTable('management_keys')
          .set({ revoked_at: new Date() })
          .where('id', '=', request.params.id)
          .where('account_id', '=', accountId)
          .where('revoked_at', 'is', null);
        // Members revoke only their own keys (auth/role-policy.ts); admins and owners any.
        if (role === 'member') revoke = revoke.where('user_id', '=', userId);
        const row = await revoke.returning(['id', 'prefix']).executeTakeFirst();
        if (row)
          await recordAudit(tx, {
            accountId,
            entityType: 'management_key',
            entityId: row.id,
            eventType: 'management_key.revoked',
            payload: { prefix: row.prefix },
          });
        return row;
      });
      if (!revoked) throw notFound('Management key');
      return reply.status(204).send(null);
    },
  );
}
