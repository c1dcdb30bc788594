import type { StoreDb } from './open-store.ts';
import type { ApiKeyScope } from './schema.ts';

/** The ids and scopes of a database's API keys, oldest first: what its instances accept. */
export function keyScopesOf(
  db: StoreDb,
  databaseId: string,
): Promise<{ key_id: string; scope: ApiKeyScope }[]> {
  return db
    .selectFrom('api_keys')
    .select(['key_id', 'scope'])
    .where('database_id', '=', databaseId)
    .orderBy('created_at')
    .execute();
}
