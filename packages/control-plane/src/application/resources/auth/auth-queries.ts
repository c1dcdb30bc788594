import type { StoreDb } from '../../../adapters/store/open-store.ts';

/** The user's two-factor columns. */
export function twoFactorColumns(db: StoreDb, userId: string) {
  return db
    .selectFrom('users')
    .select(['totp_enabled_at', 'totp_pending_enc'])
    .where('id', '=', userId)
    .executeTakeFirstOrThrow();
}

/** The user's recovery codes not yet used. */
export async function recoveryCodesLeft(db: StoreDb, userId: string): Promise<number> {
  const left = await db
    .selectFrom('recovery_codes')
    .select((eb) => eb.fn.countAll<string>().as('n'))
    .where('user_id', '=', userId)
    .where('used_at', 'is', null)
    .executeTakeFirstOrThrow();
  return Number(left.n);
}

/** Marks a login link used; false when it was used before. */
export async function redeemLink(db: StoreDb, linkId: string): Promise<boolean> {
  const row = await db
    .insertInto('login_link_redemptions')
    .values({ link_id: linkId })
    .onConflict((conflict) => conflict.column('link_id').doNothing())
    .returning('link_id')
    .executeTakeFirst();
  return row !== undefined;
}
