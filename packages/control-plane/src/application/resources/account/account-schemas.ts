import { Type } from 'typebox';
import { TERMS_VERSION_PATTERN } from '../../payments/billing-config.ts';
import { PlanLimitsSchema, UsageSchema } from '../billing/billing-schemas.ts';
import { DateTime, Uuid } from '../common-schemas.ts';

export const Account = Type.Object(
  {
    id: Uuid,
    email: Type.String({ description: "The account's email (its first user's)." }),
    createdAt: DateTime,
    plan: Type.String(),
    user: Type.Object({
      id: Uuid,
      email: Type.String(),
      role: Type.String({ description: "The caller's team role: owner, admin or member." }),
      admin: Type.Boolean({ description: 'Member of the service-admins group.' }),
    }),
    tosAcceptedVersion: Type.Union([Type.String(), Type.Null()], {
      description: 'The latest terms version the caller accepted; null before the first.',
    }),
    tosAcceptedAt: Type.Union([DateTime, Type.Null()]),
    currentTosVersion: Type.String(),
    tosAccepted: Type.Boolean({
      description: 'The caller accepted the current terms version.',
    }),
    limits: PlanLimitsSchema,
    usage: UsageSchema,
  },
  { $id: 'Account' },
);

export const AcceptTosBody = Type.Object(
  {
    version: Type.Optional(
      Type.String({
        pattern: TERMS_VERSION_PATTERN,
        description: 'The terms version accepted; default the current one (`currentTosVersion`).',
      }),
    ),
  },
  { additionalProperties: false },
);

export const TosAccepted = Type.Object(
  { ok: Type.Boolean(), version: Type.String() },
  { $id: 'TosAccepted' },
);
