import { Type } from 'typebox';
import { DateTime, Uuid } from '../common-schemas.ts';

export const Role = Type.Union(
  [Type.Literal('owner'), Type.Literal('admin'), Type.Literal('member')],
  { description: 'owner: everything; admin: everything except billing and owners; member: reads.' },
);

export const TeamMember = Type.Object(
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

export const Invitation = Type.Object(
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

export const CreatedInvitation = Type.Object(
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

export const AcceptedInvitation = Type.Object(
  { accountId: Uuid, role: Role },
  { $id: 'AcceptedTeamInvitation' },
);

export const UserParams = Type.Object({ userId: Uuid });
const Email = Type.String({ minLength: 3, maxLength: 254, pattern: '^[^@\\s]+@[^@\\s]+$' });

export const ChangeRoleBody = Type.Object({ role: Role }, { additionalProperties: false });
export const InviteBody = Type.Object(
  { email: Email, role: Role },
  { additionalProperties: false },
);
export const AcceptBody = Type.Object(
  { token: Type.String({ minLength: 1, maxLength: 200 }) },
  { additionalProperties: false },
);
