import type { Insertable } from 'kysely';
import type { StoreDb } from '../../../adapters/store/open-store.ts';
import type { TeamInvitationTable } from '../../../adapters/store/schema.ts';

/** The users columns a TeamMember is made of. */
export const MEMBER_COLUMNS = [
  'id',
  'email',
  'role',
  'totp_enabled_at',
  'created_at',
  'last_seen_at',
] as const;

/** The account's users, oldest first. */
export function membersOf(db: StoreDb, accountId: string) {
  return db
    .selectFrom('users')
    .select(MEMBER_COLUMNS)
    .where('account_id', '=', accountId)
    .orderBy('created_at')
    .orderBy('id')
    .execute();
}

/** Invitations neither accepted nor deleted (expired ones included), newest first. */
export function openInvitationsOf(db: StoreDb, accountId: string) {
  return db
    .selectFrom('team_invitations as i')
    .leftJoin('users as u', 'u.id', 'i.invited_by')
    .select([
      'i.id',
      'i.email',
      'i.role',
      'i.created_at',
      'i.expires_at',
      'u.email as inviter_email',
    ])
    .where('i.account_id', '=', accountId)
    .where('i.accepted_at', 'is', null)
    .where('i.revoked_at', 'is', null)
    .orderBy('i.created_at', 'desc')
    .execute();
}

/** True when the account has a user of that email. */
export async function isMember(db: StoreDb, accountId: string, email: string): Promise<boolean> {
  const row = await db
    .selectFrom('users')
    .select('id')
    .where('account_id', '=', accountId)
    .where('email', '=', email)
    .executeTakeFirst();
  return row !== undefined;
}

/** True when the email has an invitation to the account that can still be accepted. */
export async function hasPendingInvitation(
  db: StoreDb,
  accountId: string,
  email: string,
  now: Date,
): Promise<boolean> {
  const row = await db
    .selectFrom('team_invitations')
    .select('id')
    .where('account_id', '=', accountId)
    .where('email', '=', email)
    .where('accepted_at', 'is', null)
    .where('revoked_at', 'is', null)
    .where('expires_at', '>', now)
    .executeTakeFirst();
  return row !== undefined;
}

/** Sets a member's role; the member as written. */
export function setMemberRole(db: StoreDb, userId: string, role: string) {
  return db
    .updateTable('users')
    .set({ role })
    .where('id', '=', userId)
    .returning(MEMBER_COLUMNS)
    .executeTakeFirstOrThrow();
}

/** Locks a user's row for the rest of the transaction; the account it is in now. */
export function lockUserAccount(db: StoreDb, userId: string) {
  return db
    .selectFrom('users')
    .select('account_id')
    .where('id', '=', userId)
    .forUpdate()
    .executeTakeFirstOrThrow();
}

export async function insertInvitation(
  db: StoreDb,
  values: Insertable<TeamInvitationTable>,
): Promise<void> {
  await db.insertInto('team_invitations').values(values).execute();
}

/** Locks one of the account's invitations neither accepted nor deleted; undefined when none. */
export function lockOpenInvitation(db: StoreDb, accountId: string, id: string) {
  return db
    .selectFrom('team_invitations')
    .select(['id', 'email', 'role'])
    .where('id', '=', id)
    .where('account_id', '=', accountId)
    .where('accepted_at', 'is', null)
    .where('revoked_at', 'is', null)
    .forUpdate()
    .executeTakeFirst();
}

/** Locks the open, unexpired invitation of a token's hash; undefined when none. */
export function lockUsableInvitation(db: StoreDb, tokenHash: string, now: Date) {
  return db
    .selectFrom('team_invitations')
    .selectAll()
    .where('token_hash', '=', tokenHash)
    .where('accepted_at', 'is', null)
    .where('revoked_at', 'is', null)
    .where('expires_at', '>', now)
    .forUpdate()
    .executeTakeFirst();
}

/** Closes an invitation: accepted or deleted (revoked). */
export async function closeInvitation(
  db: StoreDb,
  id: string,
  closed: { accepted_at: Date } | { revoked_at: Date },
): Promise<void> {
  await db.updateTable('team_invitations').set(closed).where('id', '=', id).execute();
}
