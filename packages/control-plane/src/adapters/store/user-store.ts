import type { StoreDb } from './open-store.ts';

/** Users as sign-in sees them, and the management keys they act through. */

/** The columns a caller is known by: who, in which account, with which role, whether 2FA is on. */
export const USER_COLUMNS = ['id', 'account_id', 'role', 'totp_enabled_at'] as const;

/** The user a token's subject signs in as, with their email and when they were last seen. */
export function userBySubject(db: StoreDb, subject: string) {
  return db
    .selectFrom('users')
    .select([...USER_COLUMNS, 'email', 'last_seen_at'])
    .where('subject', '=', subject)
    .executeTakeFirst();
}

/** A user by id, with their email. */
export function userById(db: StoreDb, id: string) {
  return db
    .selectFrom('users')
    .select([...USER_COLUMNS, 'email'])
    .where('id', '=', id)
    .executeTakeFirst();
}

/** Records that the user was seen now, under the email their token now carries. */
export async function recordUserSeen(
  db: StoreDb,
  id: string,
  at: Date,
  email: string,
): Promise<void> {
  await db.updateTable('users').set({ last_seen_at: at, email }).where('id', '=', id).execute();
}

/**
 * Makes a user of a token's subject with an account of their own, which they own; undefined
 * when the subject has a user already (made meanwhile by a concurrent first request).
 */
export async function insertUserWithAccount(
  db: StoreDb,
  user: { accountId: string; userId: string; email: string; subject: string; at: Date },
) {
  await db
    .insertInto('accounts')
    .values({
      id: user.accountId,
      email: user.email,
      plan: 'free',
      created_at: user.at,
      updated_at: user.at,
    })
    .execute();
  return db
    .insertInto('users')
    .values({
      id: user.userId,
      account_id: user.accountId,
      email: user.email,
      subject: user.subject,
      created_at: user.at,
      last_seen_at: user.at,
      // The first user of an account owns it.
      role: 'owner',
    })
    .onConflict((oc) => oc.column('subject').doNothing())
    .returning(USER_COLUMNS)
    .executeTakeFirst();
}

/** The management key of a hash, unless revoked. */
export function activeManagementKeyByHash(db: StoreDb, keyHash: string) {
  return db
    .selectFrom('management_keys')
    .select(['id', 'account_id', 'user_id', 'last_used_at', 'name'])
    .where('key_hash', '=', keyHash)
    .where('revoked_at', 'is', null)
    .executeTakeFirst();
}

export async function recordManagementKeyUsed(db: StoreDb, id: string, at: Date): Promise<void> {
  await db.updateTable('management_keys').set({ last_used_at: at }).where('id', '=', id).execute();
}
