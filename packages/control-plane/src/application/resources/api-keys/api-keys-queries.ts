import type { Insertable } from 'kysely';
import type { StoreDb } from '../../../adapters/store/open-store.ts';
import type { ApiKeyTable } from '../../../adapters/store/schema.ts';

/** A database's API keys, newest first. */
export function apiKeysOf(db: StoreDb, databaseId: string) {
  return db
    .selectFrom('api_keys')
    .selectAll()
    .where('database_id', '=', databaseId)
    .orderBy('created_at', 'desc')
    .orderBy('id', 'desc')
    .execute();
}

export async function insertApiKeyRow(db: StoreDb, values: Insertable<ApiKeyTable>): Promise<void> {
  await db.insertInto('api_keys').values(values).execute();
}

/** Deletes one of the database's keys; what it was, or undefined when there was none. */
export function deleteApiKeyRow(db: StoreDb, databaseId: string, keyId: string) {
  return db
    .deleteFrom('api_keys')
    .where('database_id', '=', databaseId)
    .where('key_id', '=', keyId)
    .returning(['id', 'key_id', 'name', 'scope'])
    .executeTakeFirst();
}
