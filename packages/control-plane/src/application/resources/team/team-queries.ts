import type { StoreDb } from '../../../adapters/store/open-store.ts';

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
