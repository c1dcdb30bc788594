/**
 * Per-database instance API keys (spec §4.1.1). A key is `rxk_<keyId>.<hmac>`, derivable only
 * with the database's sealed key secret, so the store keeps just the key id. Every change bumps
 * `databases.keys_version`; the reconciler pushes the new key set to the running instance.
 */
import { randomUUID } from 'node:crypto';
import { deriveApiKey, newKeyId } from '@replix/instance-protocol';
import type { Selectable } from 'kysely';
import { recordAudit } from '../../../adapters/events/audit-log.ts';
import { bumpKeysVersion } from '../../../adapters/store/database-store.ts';
import type { StoreDb } from '../../../adapters/store/open-store.ts';
import type { ApiKeyScope, DatabaseTable } from '../../../adapters/store/schema.ts';
import type { SecretBox } from '../../../adapters/store/secret-box.ts';
import { notFound } from '../../../domain/errors.ts';
import { iso } from '../common-schemas.ts';
import { apiKeysOf, deleteApiKeyRow, insertApiKeyRow } from './api-keys-queries.ts';

type Database = Selectable<DatabaseTable>;

export async function listApiKeys(db: StoreDb, database: Database) {
  const rows = await apiKeysOf(db, database.id);
  return rows.map((row) => ({
    id: row.id,
    keyId: row.key_id,
    name: row.name,
    prefix: `rxk_${row.key_id}`,
    scope: row.scope,
    createdAt: iso(row.created_at),
  }));
}

export async function createApiKey(
  db: StoreDb,
  secrets: SecretBox,
  accountId: string,
  database: Database,
  request: { readonly name: string; readonly scope?: ApiKeyScope | undefined },
) {
  const keyId = newKeyId();
  const key = deriveApiKey(secrets.openBuffer(database.key_secret_enc), keyId);
  const id = randomUUID();
  const createdAt = new Date();
  const { name } = request;
  const scope: ApiKeyScope = request.scope ?? 'query';
  await db.transaction().execute(async (tx) => {
    await insertApiKeyRow(tx, {
      id,
      database_id: database.id,
      account_id: accountId,
      key_id: keyId,
      name,
      scope,
      created_at: createdAt,
    });
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
  return {
    id,
    keyId,
    name,
    prefix: `rxk_${keyId}`,
    scope,
    createdAt: createdAt.toISOString(),
    key,
  };
}

/** Deletes the key, or 404 when the database has no key of that id. */
export async function deleteApiKey(
  db: StoreDb,
  accountId: string,
  database: Database,
  keyId: string,
): Promise<void> {
  const deleted = await db.transaction().execute(async (tx) => {
    const row = await deleteApiKeyRow(tx, database.id, keyId);
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
}
