import type { StoreDb } from '../../../adapters/store/open-store.ts';

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
