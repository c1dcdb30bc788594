import { randomUUID } from 'node:crypto';
import type { StoreDb } from './open-store.ts';

/** A user's second factor: the TOTP secrets and last step, recovery codes, wrong codes. */

/** Locks the user's row; their sealed TOTP secrets (enabled, pending) and last step used. */
export function lockTotpState(db: StoreDb, userId: string) {
  return db
    .selectFrom('users')
    .select(['totp_secret_enc', 'totp_pending_enc', 'totp_last_step'])
    .where('id', '=', userId)
    .forUpdate()
    .executeTakeFirstOrThrow();
}

/**
 * The user's wrong codes since `windowStart`. Older ones no longer count: they are dropped, so
 * the table stays small.
 */
export async function recentFailures(
  db: StoreDb,
  userId: string,
  windowStart: Date,
): Promise<number> {
  await db
    .deleteFrom('second_factor_failures')
    .where('user_id', '=', userId)
    .where('created_at', '<=', windowStart)
    .execute();
  const { n } = await db
    .selectFrom('second_factor_failures')
    .select((eb) => eb.fn.countAll<string>().as('n'))
    .where('user_id', '=', userId)
    .where('created_at', '>', windowStart)
    .executeTakeFirstOrThrow();
  return Number(n);
}

export async function recordFailure(db: StoreDb, userId: string, at: Date): Promise<void> {
  await db
    .insertInto('second_factor_failures')
    .values({ id: randomUUID(), user_id: userId, created_at: at })
    .execute();
}

/** Records the TOTP step a code was accepted for: no code of it or before is accepted again. */
export async function recordTotpStep(db: StoreDb, userId: string, step: number): Promise<void> {
  await db.updateTable('users').set({ totp_last_step: step }).where('id', '=', userId).execute();
}

export function unusedRecoveryCodes(db: StoreDb, userId: string) {
  return db
    .selectFrom('recovery_codes')
    .select(['id', 'code_hash'])
    .where('user_id', '=', userId)
    .where('used_at', 'is', null)
    .execute();
}

export async function useRecoveryCode(db: StoreDb, id: string, at: Date): Promise<void> {
  await db.updateTable('recovery_codes').set({ used_at: at }).where('id', '=', id).execute();
}

/** Keeps a new, unconfirmed TOTP secret; false when the user has TOTP on already. */
export async function startTotpEnrolment(
  db: StoreDb,
  userId: string,
  pendingSecretEnc: string,
): Promise<boolean> {
  const updated = await db
    .updateTable('users')
    .set({ totp_pending_enc: pendingSecretEnc })
    .where('id', '=', userId)
    .where('totp_enabled_at', 'is', null)
    .returning('id')
    .executeTakeFirst();
  return updated !== undefined;
}

/** Turns TOTP on with the confirmed secret, now. */
export async function enableTotp(db: StoreDb, userId: string, secretEnc: string): Promise<void> {
  await db
    .updateTable('users')
    .set({ totp_secret_enc: secretEnc, totp_pending_enc: null, totp_enabled_at: new Date() })
    .where('id', '=', userId)
    .execute();
}

/** The user's recovery codes become these (by hash); the old ones are gone. */
export async function replaceRecoveryCodes(
  db: StoreDb,
  userId: string,
  codeHashes: readonly string[],
): Promise<void> {
  await db.deleteFrom('recovery_codes').where('user_id', '=', userId).execute();
  if (codeHashes.length === 0) return;
  await db
    .insertInto('recovery_codes')
    .values(codeHashes.map((code_hash) => ({ id: randomUUID(), user_id: userId, code_hash })))
    .execute();
}

/** Turns TOTP off: secrets, last step and recovery codes gone. */
export async function disableTotp(db: StoreDb, userId: string): Promise<void> {
  await db
    .updateTable('users')
    .set({
      totp_secret_enc: null,
      totp_pending_enc: null,
      totp_enabled_at: null,
      totp_last_step: null,
    })
    .where('id', '=', userId)
    .execute();
  await db.deleteFrom('recovery_codes').where('user_id', '=', userId).execute();
}
