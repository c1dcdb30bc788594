/**
 * Team membership: the users of the caller's account with their roles, and invitations by
 * email. The role policy (auth/role-policy.ts) already let only admins and owners in to change
 * anything here except accepting; the rules about owners are checked below.
 */
import { randomUUID } from 'node:crypto';
import type { Selectable } from 'kysely';
import { recordAudit } from '../../../adapters/events/audit-log.ts';
import {
  lockAccount,
  memberOf,
  moveUser,
  newPersonalAccount,
} from '../../../adapters/store/account-store.ts';
import type { StoreDb } from '../../../adapters/store/open-store.ts';
import type { UserTable } from '../../../adapters/store/schema.ts';
import { userById } from '../../../adapters/store/user-store.ts';
import { ApiError, notFound } from '../../../domain/errors.ts';
import type { Principal } from '../../identity/principal.ts';
import { TEAM_ROLES, type TeamRole } from '../../identity/role-policy.ts';
import { assertMayLeave, assertNotLastOwner } from '../../membership/team-membership.ts';
import { iso } from '../common-schemas.ts';
import {
  hashInvitationToken,
  INVITATION_LIFETIME_MS,
  newInvitationToken,
} from './invitation-token.ts';
import {
  closeInvitation,
  hasPendingInvitation,
  insertInvitation,
  isMember,
  lockOpenInvitation,
  lockUsableInvitation,
  lockUserAccount,
  type MEMBER_COLUMNS,
  membersOf,
  openInvitationsOf,
  setMemberRole,
} from './team-queries.ts';

type Caller = Pick<Principal, 'accountId' | 'role' | 'userId'>;

function asRole(value: string): TeamRole {
  return (TEAM_ROLES as readonly string[]).includes(value) ? (value as TeamRole) : 'member';
}

function memberRecord(row: Pick<Selectable<UserTable>, (typeof MEMBER_COLUMNS)[number]>) {
  return {
    userId: row.id,
    email: row.email,
    role: asRole(row.role),
    twoFactorEnabled: row.totp_enabled_at !== null,
    createdAt: iso(row.created_at),
    lastSeenAt: iso(row.last_seen_at),
  };
}

/** Only owners make, change or remove owners. */
function assertMayTouchOwners(callerRole: TeamRole, what: string): void {
  if (callerRole !== 'owner') throw new ApiError('forbidden', `Only owners may ${what}.`);
}

export async function listMembers(db: StoreDb, accountId: string) {
  return (await membersOf(db, accountId)).map(memberRecord);
}

export async function changeMemberRole(
  db: StoreDb,
  { accountId, role: callerRole }: Caller,
  userId: string,
  role: TeamRole,
) {
  const row = await db.transaction().execute(async (tx) => {
    await lockAccount(tx, accountId);
    const member = await memberOf(tx, accountId, userId);
    if (member.role === 'owner' || role === 'owner') {
      assertMayTouchOwners(callerRole, 'make or change owners');
    }
    if (member.role === 'owner' && role !== 'owner') {
      await assertNotLastOwner(tx, member, 'This change');
    }
    const updated = await setMemberRole(tx, member.userId, role);
    if (member.role !== role) {
      await recordAudit(tx, {
        accountId,
        entityType: 'user',
        entityId: member.userId,
        eventType: 'team_member.updated',
        payload: { email: member.email, fromRole: member.role, toRole: role },
      });
    }
    return updated;
  });
  return memberRecord(row);
}

/** Removes a user from the account; they keep signing in, to a new empty account of their own. */
export async function removeMember(
  db: StoreDb,
  { accountId, role: callerRole, userId: callerId }: Caller,
  userId: string,
): Promise<void> {
  await db.transaction().execute(async (tx) => {
    await lockAccount(tx, accountId);
    const member = await memberOf(tx, accountId, userId);
    if (member.role === 'owner') assertMayTouchOwners(callerRole, 'remove owners');
    await assertNotLastOwner(tx, member, 'Removing this member');
    const personal = await newPersonalAccount(tx, member.email);
    await moveUser(tx, member, personal, 'owner');
    await recordAudit(tx, {
      accountId,
      entityType: 'user',
      entityId: member.userId,
      eventType: 'team_member.removed',
      payload: { email: member.email, role: member.role, self: member.userId === callerId },
    });
  });
}

export async function listInvitations(db: StoreDb, accountId: string) {
  const rows = await openInvitationsOf(db, accountId);
  const now = Date.now();
  return rows.map((row) => ({
    id: row.id,
    email: row.email,
    role: asRole(row.role),
    invitedBy: row.inviter_email,
    status: row.expires_at.getTime() > now ? ('pending' as const) : ('expired' as const),
    createdAt: iso(row.created_at),
    expiresAt: iso(row.expires_at),
  }));
}

/** Invites an email with a role; the token is in this answer only, the store keeps its hash. */
export async function createInvitation(
  db: StoreDb,
  { accountId, userId, role: callerRole }: Caller,
  invite: { readonly email: string; readonly role: TeamRole },
) {
  const email = invite.email.trim().toLowerCase();
  const role = invite.role;
  if (role === 'owner') assertMayTouchOwners(callerRole, 'invite owners');
  const { token, hash } = newInvitationToken();
  const id = randomUUID();
  const createdAt = new Date();
  const expiresAt = new Date(createdAt.getTime() + INVITATION_LIFETIME_MS);
  await db.transaction().execute(async (tx) => {
    await lockAccount(tx, accountId);
    if (await isMember(tx, accountId, email)) {
      throw new ApiError('conflict', `${email} is already a member of the account.`);
    }
    if (await hasPendingInvitation(tx, accountId, email, createdAt)) {
      throw new ApiError(
        'conflict',
        `${email} already has a pending invitation; delete it to send a new one.`,
      );
    }
    await insertInvitation(tx, {
      id,
      account_id: accountId,
      email,
      role,
      token_hash: hash,
      invited_by: userId,
      created_at: createdAt,
      expires_at: expiresAt,
    });
    await recordAudit(tx, {
      accountId,
      entityType: 'team_invitation',
      entityId: id,
      eventType: 'team_invitation.created',
      payload: { email, role },
    });
  });
  return {
    id,
    email,
    role,
    createdAt: createdAt.toISOString(),
    expiresAt: expiresAt.toISOString(),
    token,
  };
}

/** Deletes an open invitation; its token stops working at once. */
export async function deleteInvitation(
  db: StoreDb,
  { accountId, role: callerRole }: Caller,
  id: string,
): Promise<void> {
  await db.transaction().execute(async (tx) => {
    const row = await lockOpenInvitation(tx, accountId, id);
    if (!row) throw notFound('Invitation');
    if (row.role === 'owner') assertMayTouchOwners(callerRole, 'delete owner invitations');
    await closeInvitation(tx, row.id, { revoked_at: new Date() });
    await recordAudit(tx, {
      accountId,
      entityType: 'team_invitation',
      entityId: row.id,
      eventType: 'team_invitation.deleted',
      payload: { email: row.email, role: row.role },
    });
  });
}

/** Moves the caller into the inviting account with the invitation's role. */
export async function acceptInvitation(db: StoreDb, userId: string, token: string) {
  const now = new Date();
  return db.transaction().execute(async (tx) => {
    const invitation = await lockUsableInvitation(tx, hashInvitationToken(token), now);
    if (!invitation) throw notFound('Invitation (or it has expired, been used or deleted)');
    const me = await userById(tx, userId);
    if (!me) throw new Error('The signed-in user is not in the store.');
    if (me.email.toLowerCase() !== invitation.email) {
      throw new ApiError('forbidden', 'This invitation is for another email address.');
    }
    if (me.account_id === invitation.account_id) {
      throw new ApiError('conflict', 'You are already a member of this account.');
    }
    // Lock both accounts in a fixed order (accounts before users, as every team change
    // does), so crossing changes cannot deadlock; then check the user did not move meanwhile.
    for (const id of [me.account_id, invitation.account_id].sort()) await lockAccount(tx, id);
    const still = await lockUserAccount(tx, userId);
    if (still.account_id !== me.account_id) {
      throw new ApiError('conflict', 'Your account changed meanwhile; try again.');
    }
    const member = { userId: me.id, accountId: me.account_id, email: me.email, role: me.role };
    await assertMayLeave(tx, member);
    const role = asRole(invitation.role);
    await moveUser(tx, member, invitation.account_id, role);
    await closeInvitation(tx, invitation.id, { accepted_at: now });
    await recordAudit(tx, {
      accountId: invitation.account_id,
      entityType: 'team_invitation',
      entityId: invitation.id,
      eventType: 'team_invitation.accepted',
      payload: { email: me.email, role, userId: me.id },
    });
    await recordAudit(tx, {
      accountId: me.account_id,
      entityType: 'user',
      entityId: me.id,
      eventType: 'team_member.left',
      payload: { email: me.email, role: me.role },
    });
    return { accountId: invitation.account_id, role };
  });
}
