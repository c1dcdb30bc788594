import { createHash } from 'node:crypto';
import type { Insertable, Selectable } from 'kysely';
import type { StoreDb } from './open-store.ts';
import type { BillingSessionTable } from './schema.ts';

/** The local payment provider's checkout and portal pages, each behind a token. */

export type BillingSession = Selectable<BillingSessionTable>;

/** Only the SHA-256 of a page's token is stored: the store alone cannot open a page. */
export function sessionTokenHash(token: string): string {
  return createHash('sha256').update(token).digest('hex');
}

/** The open, unexpired session of a page token, or undefined. */
export async function openBillingSession(
  db: StoreDb,
  token: string,
  kind: 'checkout' | 'portal',
): Promise<BillingSession | undefined> {
  return db
    .selectFrom('billing_sessions')
    .selectAll()
    .where('token_hash', '=', sessionTokenHash(token))
    .where('kind', '=', kind)
    .executeTakeFirst();
}

/** Records a page's session (the token's hash only). */
export async function insertBillingSession(
  db: StoreDb,
  values: Insertable<BillingSessionTable>,
): Promise<void> {
  await db.insertInto('billing_sessions').values(values).execute();
}

/** Locks a session's row for the rest of the transaction; undefined when it is gone. */
export function lockBillingSession(db: StoreDb, id: string): Promise<BillingSession | undefined> {
  return db
    .selectFrom('billing_sessions')
    .selectAll()
    .where('id', '=', id)
    .forUpdate()
    .executeTakeFirst();
}

/** Closes a session: paid (`completed`) or not (`cancelled`). */
export async function closeBillingSession(
  db: StoreDb,
  id: string,
  status: 'completed' | 'cancelled',
): Promise<void> {
  await db
    .updateTable('billing_sessions')
    .set({ status, completed_at: new Date() })
    .where('id', '=', id)
    .execute();
}
