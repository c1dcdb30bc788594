import { sql } from 'kysely';
import type { StoreDb } from '../../store/open-store.ts';

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

/** Marks the database's key set changed, so the reconciler pushes it to the instance. */
export async function bumpKeysVersion(tx: StoreDb, databaseId: string): Promise<void> {
  await tx
    .updateTable('databases')
    .set({ keys_version: sql<number>`keys_version + 1` })
    .where('id', '=', databaseId)
    .execute();
}
