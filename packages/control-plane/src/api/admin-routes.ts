import { sql } from 'kysely';
import { Type } from 'typebox';
import { planLimits } from '../domain/plans.ts';
import type { ApiServer } from './build-api.ts';
import { DateTime, ErrorResponse, errorResponses, iso, Uuid } from './common-schemas.ts';
import type { ApiContext } from './context.ts';

const Customer = Type.Object(
  {
    id: Uuid,
    email: Type.String(),
    plan: Type.String(),
    createdAt: DateTime,
    databaseCount: Type.Integer(),
    runningInstanceCount: Type.Integer(),
    buildsLast30Days: Type.Integer(),
    lastActivityAt: Type.Union([DateTime, Type.Null()]),
    planLimit: Type.Object({ databases: Type.Integer(), computeUnits: Type.Integer() }),
    overLimit: Type.Boolean(),
  },
  { $id: 'Customer' },
);

/** Operator routes; only members of the identity provider's `service-admins` group. */
export function registerAdminRoutes(app: ApiServer, { db }: ApiContext): void {
  app.get(
    '/admin/customers',
    {
      config: { admin: true },
      schema: {
        tags: ['admin'],
        summary: 'Every customer account with its usage (admin only)',
        response: { 200: Type.Array(Customer), 403: ErrorResponse, ...errorResponses() },
      },
    },
    async () => {
      const rows = await db
        .selectFrom('accounts as a')
        .select([
          'a.id',
          'a.email',
          'a.plan',
          'a.created_at',
          sql<number>`(SELECT count(*) FROM databases d WHERE d.account_id = a.id AND d.deleted_at IS NULL)::int`.as(
            'database_count',
          ),
          sql<number>`(SELECT count(*) FROM databases d WHERE d.account_id = a.id AND d.deleted_at IS NULL AND d.status = 'running')::int`.as(
            'running_count',
          ),
          sql<number>`(SELECT count(*) FROM builds b WHERE b.account_id = a.id AND b.created_at > now() - interval '30 days')::int`.as(
            'builds_30d',
          ),
          sql<Date | null>`(SELECT max(e.created_at) FROM audit_events e WHERE e.account_id = a.id)`.as(
            'last_activity',
          ),
        ])
        .orderBy('a.created_at', 'asc')
        .execute();
      return rows.map((row) => {
        const limits = planLimits(row.plan);
        return {
          id: row.id,
          email: row.email,
          plan: row.plan,
          createdAt: iso(row.created_at),
          databaseCount: row.database_count,
          runningInstanceCount: row.running_count,
          buildsLast30Days: row.builds_30d,
          lastActivityAt: row.last_activity ? new Date(row.last_activity).toISOString() : null,
          planLimit: { databases: limits.databases, computeUnits: limits.computeUnits },
          overLimit: row.database_count > limits.databases,
        };
      });
    },
  );
}
