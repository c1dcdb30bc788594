import type { StoreDb } from '../../../adapters/store/open-store.ts';

/** The account's id, email and creation time. */
export function accountRow(db: StoreDb, accountId: string) {
  return db
    .selectFrom('accounts')
    .select(['id', 'email', 'created_at'])
    .where('id', '=', accountId)
    .executeTakeFirstOrThrow();
}

/** The terms version the user accepted last, with when. */
export function latestTosAcceptance(db: StoreDb, userId: string) {
  return db
    .selectFrom('tos_acceptances')
    .select(['version', 'accepted_at'])
    .where('user_id', '=', userId)
    .orderBy('accepted_at', 'desc')
    .limit(1)
    .executeTakeFirst();
}

/** True when the user accepted that terms version. */
export async function acceptedTos(db: StoreDb, userId: string, version: string): Promise<boolean> {
  const row = await db
    .selectFrom('tos_acceptances')
    .select('version')
    .where('user_id', '=', userId)
    .where('version', '=', version)
    .executeTakeFirst();
  return row !== undefined;
}

/** Records that the user accepted terms `version`; false when they had already. */
export async function recordTosAcceptance(
  db: StoreDb,
  userId: string,
  accountId: string,
  version: string,
): Promise<boolean> {
  const inserted = await db
    .insertInto('tos_acceptances')
    .values({ user_id: userId, account_id: accountId, version })
    .onConflict((oc) => oc.columns(['user_id', 'version']).doNothing())
    .returning('version')
    .executeTakeFirst();
  return inserted !== undefined;
}
