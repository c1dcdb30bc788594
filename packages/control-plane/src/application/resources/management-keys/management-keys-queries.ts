import type { StoreDb } from '../../../adapters/store/open-store.ts';

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
