import { Type } from 'typebox';
import {
  ErrorResponse,
  errorResponses,
  IdParams,
} from '../../application/resources/common-schemas.ts';
import {
  AcceptBody,
  AcceptedInvitation,
  ChangeRoleBody,
  CreatedInvitation,
  Invitation,
  InviteBody,
  TeamMember,
  UserParams,
} from '../../application/resources/team/team-schemas.ts';
import {
  acceptInvitation,
  changeMemberRole,
  createInvitation,
  deleteInvitation,
  listInvitations,
  listMembers,
  removeMember,
} from '../../application/resources/team/team-service.ts';
import type { ApiServer } from '../api-server.ts';
import type { ApiContext } from '../context.ts';

const tags = ['team'];

/** Team members and invitations; team-service.ts has the rules about owners. */
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
    async (request) => listMembers(db, request.principal.accountId),
  );

  app.patch(
    '/team/members/:userId',
    {
      schema: {
        tags,
        summary: "Change a member's role (owners only for anything involving owners)",
        params: UserParams,
        body: ChangeRoleBody,
        response: { 200: TeamMember, ...errorResponses(403, 404, 409) },
      },
    },
    async (request) =>
      changeMemberRole(db, request.principal, request.params.userId, request.body.role),
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
      await removeMember(db, request.principal, request.params.userId);
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
    async (request) => listInvitations(db, request.principal.accountId),
  );

  app.post(
    '/team/invitations',
    {
      schema: {
        tags,
        summary: 'Invite someone by email with a role; the token is in this response only',
        body: InviteBody,
        response: { 201: CreatedInvitation, ...errorResponses(403, 409) },
      },
    },
    async (request, reply) => {
      const created = await createInvitation(db, request.principal, request.body);
      return reply.status(201).send(created);
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
      await deleteInvitation(db, request.principal, request.params.id);
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
        body: AcceptBody,
        response: { 200: AcceptedInvitation, ...errorResponses(403, 404, 409) },
      },
    },
    async (request) => acceptInvitation(db, request.principal.userId, request.body.token),
  );
}
