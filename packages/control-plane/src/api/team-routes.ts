import { randomUUID } from 'node:crypto';
import type { Selectable } from 'kysely';
import { Type } from 'typebox';
import { TEAM_ROLES, type TeamRole } from '../auth/role-policy.ts';
import { ApiError, notFound } from '../errors.ts';
import { recordAudit } from '../events/audit-log.ts';
import type { UserTable } from '../store/schema.ts';
import {
  hashInvitationToken,
  INVITATION_LIFETIME_MS,
  newInvitationToken,
} from '../team/invitation-token.ts';
import {
  assertMayLeave,
  assertNotLastOwner,
  lockAccount,
  memberOf,
  moveUser,
  newPersonalAccount,
} from '../team/team-membership.ts';
import type { ApiServer } from './api-server.ts';
import { DateTime, ErrorResponse, errorResponses, IdParams, iso, Uuid } from './common-schemas.ts';
import type { ApiContext } from './context.ts';

const Role = Type.Union([Type.Literal('owner'), Type.Literal('admin'), Type.Literal('member')], {
  description: 'owner: everything; admin: everything except billing and owners; member: reads.',
});

const TeamMember = Type.Object(
  {
    userId: Uuid,
    email: Type.String(),
    role: Role,
    twoFactorEnabled: Type.Boolean(),
    createdAt: DateTime,
    lastSeenAt: DateTime,
  },
  { $id: 'TeamMember' },
);

const Invitation = Type.Object(
  {
    id: Uuid,
    email: Type.String(),
    role: Role,
    invitedBy: Type.Union([Type.String(), Type.Null()], { description: "The inviter's email." }),
    status: Type.Union([Type.Literal('pending'), Type.Literal('expired')]),
    createdAt: DateTime,
    expiresAt: DateTime,
  },
  { $id: 'TeamInvitation' },
);

const CreatedInvitation = Type.Object(
  {
    id: Uuid,
    email: Type.String(),
    role: Role,
    createdAt: DateTime,
    expiresAt: DateTime,
    token: Type.String({
      description:
        'The invitation token `rti_…`, for POST /v1/team/invitations/accept. Shown once; only its hash is kept.',
    }),
  },
  { $id: 'CreatedTeamInvitation' },
);

const AcceptedInvitation = Type.Object(
  { accountId: Uuid, role: Role },
  { $id: 'AcceptedTeamInvitation' },
);

const UserParams = Type.Object({ userId: Uuid });
const Email = Type.String({ minLength: 3, maxLength: 254, pattern: '^[^@\\s]+@[^@\\s]+$' });

const tags = ['team'];

function asRole(value: string): TeamRole {
  return (TEAM_ROLES as readonly string[]).includes(value) ? (value as TeamRole) : 'member';
}

/** The users columns a TeamMember is made of. */
const MEMBER_COLUMNS = [
  'id',
  'email',
  'role',
  'totp_enabled_at',
  'created_at',
  'last_seen_at',
] as const;

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

/**
 * Team membership: the users of the caller's account with their roles, and invitations by
 * email. The role policy (auth/role-policy.ts) already let only admins and owners in to change
 * anything here except accepting; the rules about owners are checked below.
 */
export function registerTeamRoutes(app: ApiServer, { db }: ApiContext): void {
  app.get(
    '/team/members',
    {
      schema: {
        tags,
        summary: "List the users of the caller's account with their roles",
        response: { 200: Type.Array(TeamMember), ...errorResponses() },
      },
    },
    async (request) => {
      const rows = await db
        .selectFrom('users')
        .select(MEMBER_COLUMNS)
        .where('account_id', '=', request.principal.accountId)
        .orderBy('created_at')
        .orderBy('id')
        .execute();
      return rows.map(memberRecord);
    },
  );

  app.patch(
    '/team/members/:userId',
    {
      schema: {
        tags,
        summary: "Change a member's role (owners only for anything involving owners)",
        params: UserParams,
        body: Type.Object({ role: Role }, { additionalProperties: false }),
        response: { 200: TeamMember, ...errorResponses(403, 404, 409) },
      },
    },
    async (request) => {
      const { accountId, role: callerRole } = request.principal;
      const role = request.body.role;
      const row = await db.transaction().execute(async (tx) => {
        await lockAccount(tx, accountId);
        const member = await memberOf(tx, accountId, request.params.userId);
        if (member.role === 'owner' || role === 'owner') {
          assertMayTouchOwners(callerRole, 'make or change owners');
        }
        if (member.role === 'owner' && role !== 'owner') {
          await assertNotLastOwner(tx, member, 'This change');
        }
        const updated = await tx
          .updateTable('users')
          .set({ role })
          .where('id', '=', member.userId)
          .returning(MEMBER_COLUMNS)
          .executeTakeFirstOrThrow();
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
    },
  );

  app.delete(
    '/team/members/:userId',
    {
      schema: {
        tags,
        summary:
          'Remove a user from the account; they keep signing in, to a new empty account of their own',
        params: UserParams,
        response: { 204: Type.Null(), ...errorResponses(403, 404, 409) },
      },
    },
    async (request, reply) => {
      const { accountId, role: callerRole, userId: callerId } = request.principal;
      await db.transaction().execute(async (tx) => {
        await lockAccount(tx, accountId);
        const member = await memberOf(tx, accountId, request.params.userId);
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
      return reply.status(204).send(null);
    },
  );

  app.get(
    '/team/invitations',
    {
      schema: {
        tags,
        summary: 'List invitations not yet accepted or deleted (expired ones included)',
        response: { 200: Type.Array(Invitation), ...errorResponses() },
      },
    },
    async (request) => {
      const rows = await db
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
        .where('i.account_id', '=', request.principal.accountId)
        .where('i.accepted_at', 'is', null)
        .where('i.revoked_at', 'is', null)
        .orderBy('i.created_at', 'desc')
        .execute();
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
    },
  );

  app.post(
    '/team/invitations',
    {
      schema: {
        tags,
        summary: 'Invite someone by email with a role; the token is in this response only',
        body: Type.Object({ email: Email, role: Role }, { additionalProperties: false }),
        response: { 201: CreatedInvitation, ...errorResponses(403, 409) },
      },
    },
    async (request, reply) => {
      const { accountId, userId, role: callerRole } = request.principal;
      const email = request.body.email.trim().toLowerCase();
      const role = request.body.role;
      if (role === 'owner') assertMayTouchOwners(callerRole, 'invite owners');
      const { token, hash } = newInvitationToken();
      const id = randomUUID();
      const createdAt = new Date();
      const expiresAt = new Date(createdAt.getTime() + INVITATION_LIFETIME_MS);
      await db.transaction().execute(async (tx) => {
        await lockAccount(tx, accountId);
        const already = await tx
          .selectFrom('users')
          .select('id')
          .where('account_id', '=', accountId)
          .where('email', '=', email)
          .executeTakeFirst();
        if (already) throw new ApiError('conflict', `${email} is already a member of the account.`);
        const pending = await tx
          .selectFrom('team_invitations')
          .select('id')
          .where('account_id', '=', accountId)
          .where('email', '=', email)
          .where('accepted_at', 'is', null)
          .where('revoked_at', 'is', null)
          .where('expires_at', '>', createdAt)
          .executeTakeFirst();
        if (pending) {
          throw new ApiError(
            'conflict',
            `${email} already has a pending invitation; delete it to send a new one.`,
          );
        }
        await tx
          .insertInto('team_invitations')
          .values({
            id,
            account_id: accountId,
            email,
            role,
            token_hash: hash,
            invited_by: userId,
            created_at: createdAt,
            expires_at: expiresAt,
          })
          .execute();
        await recordAudit(tx, {
          accountId,
          entityType: 'team_invitation',
          entityId: id,
          eventType: 'team_invitation.created',
          payload: { email, role },
        });
      });
      return reply.status(201).send({
        id,
        email,
        role,
        createdAt: createdAt.toISOString(),
        expiresAt: expiresAt.toISOString(),
        token,
      });
    },
  );

  app.delete(
    '/team/invitations/:id',
    {
      schema: {
        tags,
        summary: 'Delete an invitation; its token stops working at once',
        params: IdParams,
        response: { 204: Type.Null(), 404: ErrorResponse, ...errorResponses(403) },
      },
    },
    async (request, reply) => {
      const { accountId, role: callerRole } = request.principal;
      await db.transaction().execute(async (tx) => {
        const row = await tx
          .selectFrom('team_invitations')
          .select(['id', 'email', 'role'])
          .where('id', '=', request.params.id)
          .where('account_id', '=', accountId)
          .where('accepted_at', 'is', null)
          .where('revoked_at', 'is', null)
          .forUpdate()
          .executeTakeFirst();
        if (!row) throw notFound('Invitation');
        if (row.role === 'owner') assertMayTouchOwners(callerRole, 'delete owner invitations');
        await tx
          .updateTable('team_invitations')
          .set({ revoked_at: new Date() })
          .where('id', '=', row.id)
          .execute();
        await recordAudit(tx, {
          accountId,
          entityType: 'team_invitation',
          entityId: row.id,
          eventType: 'team_invitation.deleted',
          payload: { email: row.email, role: row.role },
        });
      });
      return reply.status(204).send(null);
    },
  );

  app.post(
    '/team/invitations/accept',
    {
      schema: {
        tags,
        summary:
          "Join the inviting account with the invitation's role (the caller's email must match)",
        body: Type.Object(
          { token: Type.String({ minLength: 1, maxLength: 200 }) },
          { additionalProperties: false },
        ),
        response: { 200: AcceptedInvitation, ...errorResponses(403, 404, 409) },
      },
    },
    async (request) => {
      const { userId } = request.principal;
      const now = new Date();
      return db.transaction().execute(async (tx) => {
        const invitation = await tx
          .selectFrom('team_invitations')
          .selectAll()
          .where('token_hash', '=', hashInvitationToken(request.body.token))
          .where('accepted_at', 'is', null)
          .where('revoked_at', 'is', null)
          .where('expires_at', '>', now)
          .forUpdate()
          .executeTakeFirst();
        if (!invitation) throw notFound('Invitation (or it has expired, been used or deleted)');
        const me = await tx
          .selectFrom('users')
          .select(['id', 'account_id', 'email', 'role'])
          .where('id', '=', userId)
          .executeTakeFirstOrThrow();
        if (me.email.toLowerCase() !== invitation.email) {
          throw new ApiError('forbidden', 'This invitation is for another email address.');
        }
        if (me.account_id === invitation.account_id) {
          throw new ApiError('conflict', 'You are already a member of this account.');
        }
        // Lock both accounts in a fixed order (accounts before users, as every team change
        // does), so crossing changes cannot deadlock; then check the user did not move meanwhile.
        for (const id of [me.account_id, invitation.account_id].sort()) await lockAccount(tx, id);
        const still = await tx
          .selectFrom('users')
          .select('account_id')
          .where('id', '=', userId)
          .forUpdate()
          .executeTakeFirstOrThrow();
        if (still.account_id !== me.account_id) {
          throw new ApiError('conflict', 'Your account changed meanwhile; try again.');
        }
        const member = { userId: me.id, accountId: me.account_id, email: me.email, role: me.role };
        await assertMayLeave(tx, member);
        const role = asRole(invitation.role);
        await moveUser(tx, member, invitation.account_id, role);
        await tx
          .updateTable('team_invitations')
          .set({ accepted_at: now })
          .where('id', '=', invitation.id)
          .execute();
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
    },
  );
}
