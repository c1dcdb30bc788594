import type { StoreDb } from '../../../adapters/store/open-store.ts';

/** The account's email: the checkout's customer email. */
export async function accountEmail(db: StoreDb, accountId: string): Promise<string> {
  const account = await db
    .selectFrom('accounts')
    .select('email')
    .where('id', '=', accountId)
    .executeTakeFirstOrThrow();
  return account.email;
}
