import { randomUUID } from 'node:crypto';
import type { TeamRole } from '../../application/identity/role-policy.ts';
import { notFound } from '../../domain/errors.ts';
import type { StoreDb } from './open-store.ts';

/** Accounts and their users: who is in which account, with which role. */

/** A user as a member of their account. */
export interface Member {
  readonly userId: string;
  readonly accountId: string;
  readonly email: string;
  readonly role: string;
}

type Tx = StoreDb;

/**
 * Locks the account row for the rest of the transaction. Every change to an account's members
 * takes it first, so two concurrent demotions cannot both see "another owner is left"; so does
 * a new database, so two cannot both fit under the plan's count.
 */
export async function lockAccount(tx: Tx, accountId: string): Promise<void> {
  await tx.selectFrom('accounts').select('id').where('id', '=', accountId).forUpdate().execute();
}

/** A user of the account (locked), or 404 exactly like an unknown id. */
export async function memberOf(tx: Tx, accountId: string, userId: string): Promise<Member> {
  const row = await tx
    .selectFrom('users')
    .select(['id', 'account_id', 'email', 'role'])
    .where('id', '=', userId)
    .where('account_id', '=', accountId)
    .forUpdate()
    .executeTakeFirst();
  if (!row) throw notFound('Member');
  return { userId: row.id, accountId: row.account_id, email: row.email, role: row.role };
}

export async function ownerCount(tx: Tx, accountId: string): Promise<number> {
  const row = await tx
    .selectFrom('users')
    .select((eb) => eb.fn.countAll<string>().as('n'))
    .where('account_id', '=', accountId)
    .where('role', '=', 'owner')
    .executeTakeFirstOrThrow();
  return Number(row.n);
}

/**
 * Moves a user into `accountId` with `role`, revoking their management keys of the account they
 * leave (a key belongs to the account it was made in).
 */
export async function moveUser(
  tx: Tx,
  member: Member,
  accountId: string,
  role: TeamRole,
): Promise<void> {
  await tx
    .updateTable('users')
    .set({ account_id: accountId, role })
    .where('id', '=', member.userId)
    .execute();
  await tx
    .updateTable('management_keys')
    .set({ revoked_at: new Date() })
    .where('user_id', '=', member.userId)
    .where('account_id', '=', member.accountId)
    .where('revoked_at', 'is', null)
    .execute();
}

/** A fresh personal account the user owns, for a user removed from a team. */
export async function newPersonalAccount(tx: Tx, email: string): Promise<string> {
  const id = randomUUID();
  const now = new Date();
  await tx
    .insertInto('accounts')
    .values({ id, email, plan: 'free', created_at: now, updated_at: now })
    .execute();
  return id;
}

/** The ids of the account's users other than `userId`. */
export function otherUsersOf(db: StoreDb, accountId: string, userId: string) {
  return db
    .selectFrom('users')
    .select('id')
    .where('account_id', '=', accountId)
    .where('id', '!=', userId)
    .execute();
}
