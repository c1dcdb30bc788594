import { Type } from 'typebox';
import { TERMS_VERSION_PATTERN } from '../billing/billing-config.ts';
import { billingConfigOf } from '../billing/create-payment-provider.ts';
import { accountPlan } from '../connections/account-plan.ts';
import { accountUsage } from '../domain/plan-enforcement.ts';
import { recordAudit } from '../events/audit-log.ts';
import type { ApiServer } from './api-server.ts';
import { limitsResource, PlanLimitsSchema, UsageSchema } from './billing-routes.ts';
import { DateTime, errorResponses, iso, Uuid } from './common-schemas.ts';
import type { ApiContext } from './context.ts';

const tags = ['account'];

const Account = Type.Object(
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

const AcceptTosBody = Type.Object(
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

const TosAccepted = Type.Object(
  { ok: Type.Boolean(), version: Type.String() },
  { $id: 'TosAccepted' },
);

/** The caller's account and their acceptance of the terms of service. */
export function registerAccountRoutes(app: ApiServer, context: ApiContext): void {
  const { db } = context;
  const { termsVersion } = billingConfigOf(context.config);

  app.get(
    '/account',
    {
      schema: {
        tags,
        summary: "The caller's account: plan, role, terms acceptance, limits and usage",
        response: { 200: Account, ...errorResponses() },
      },
    },
    async (request) => {
      const { accountId, userId, email, role, admin } = request.principal;
      const account = await db
        .selectFrom('accounts')
        .select(['id', 'email', 'created_at'])
        .where('id', '=', accountId)
        .executeTakeFirstOrThrow();
      const plan = await accountPlan(db, accountId);
      const latest = await db
        .selectFrom('tos_acceptances')
        .select(['version', 'accepted_at'])
        .where('user_id', '=', userId)
        .orderBy('accepted_at', 'desc')
        .limit(1)
        .executeTakeFirst();
      const current = await db
        .selectFrom('tos_acceptances')
        .select('version')
        .where('user_id', '=', userId)
        .where('version', '=', termsVersion)
        .executeTakeFirst();
      return {
        id: account.id,
        email: account.email,
        createdAt: iso(account.created_at),
        plan: plan.plan,
        user: { id: userId, email, role, admin },
        tosAcceptedVersion: latest?.version ?? null,
        tosAcceptedAt: iso(latest?.accepted_at ?? null),
        currentTosVersion: termsVersion,
        tosAccepted: current !== undefined,
        limits: limitsResource(plan.limits),
        usage: await accountUsage(db, accountId),
      };
    },
  );

  app.post(
    '/account/accept-tos',
    {
      schema: {
        tags,
        summary: 'Record that the caller accepted the terms of service',
        description:
          'Records, for the authenticated user, the acceptance of `version` (default the current terms version, `REPLIX_TOS_VERSION`) with the time. Accepting a version again keeps the first acceptance and answers the same. The web app calls it on first login (spec §4.1).',
        body: AcceptTosBody,
        response: { 200: TosAccepted, ...errorResponses() },
      },
      // The body is optional: no body means the current version.
      preValidation: async (request) => {
        request.body ??= {};
      },
    },
    async (request) => {
      const { accountId, userId } = request.principal;
      const version = request.body.version ?? termsVersion;
      await db.transaction().execute(async (tx) => {
        const inserted = await tx
          .insertInto('tos_acceptances')
          .values({ user_id: userId, account_id: accountId, version })
          .onConflict((oc) => oc.columns(['user_id', 'version']).doNothing())
          .returning('version')
          .executeTakeFirst();
        if (inserted) {
          await recordAudit(tx, {
            accountId,
            entityType: 'user',
            entityId: userId,
            eventType: 'account.tos_accepted',
            payload: { version, current: version === termsVersion },
          });
        }
      });
      return { ok: true, version };
    },
  );
}
