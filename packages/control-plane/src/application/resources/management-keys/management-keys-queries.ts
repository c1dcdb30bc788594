import type { Insertable } from 'kysely';
import type { StoreDb } from '../../../adapters/store/open-store.ts';
import type { ManagementKeyTable } from '../../../adapters/store/schema.ts';

/** The account's management keys that are not revoked, newest first. */
export function activeManagementKeys(db: StoreDb, accountId: string) {
  return db
    .selectFrom('management_keys')
    .selectAll()
    .where('account_id', '=', accountId)
    .where('revoked_at', 'is', null)
    .orderBy('created_at', 'desc')
    .execute();
}

export async function insertManagementKeyRow(
  db: StoreDb,
  values: Insertable<ManagementKeyTable>,
): Promise<void> {
  await db.insertInto('management_keys').values(values).execute();
}

/**
 * Revokes one of the account's keys that is not revoked yet (only `ownerId`'s, when given);
 * its id and prefix, or undefined when there was no such key.
 */
export function revokeManagementKeyRow(
  db: StoreDb,
  id: string,
  accountId: string,
  ownerId: string | undefined,
) {
  let revoke = db
    .updateTable('management_keys')
    .set({ revoked_at: new Date() })
    .where('id', '=', id)
    .where('account_id', '=', accountId)
    .where('revoked_at', 'is', null);
  if (ownerId !== undefined) revoke = revoke.where('user_id', '=', ownerId);
  return revoke.returning(['id', 'prefix']).executeTakeFirst();
}
