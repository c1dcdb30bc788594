import type { Kysely } from 'kysely';
import { sql } from 'kysely';
import { Type } from 'typebox';
import { changePlan } from '../billing/billing-ledger.ts';
import {
  COMPUTE_STATUSES,
  computeUnitsAllowed,
  databaseComputeUnits,
  instanceSizeViolation,
  type OverageState,
  planOf,
  pollIntervalViolation,
  regionViolation,
} from '../domain/plan-enforcement.ts';
import { INSTANCE_SIZE_NAMES, type InstanceSize, PLANS } from '../domain/plans.ts';
import { notFound } from '../errors.ts';
import { recordAudit } from '../events/audit-log.ts';
import { auditAction, lockDatabase, queueGoal } from '../resources/databases/database-goals.ts';
import type { Goal, Store } from '../store/schema.ts';
import type { ApiServer } from './api-server.ts';
import { DateTime, ErrorResponse, errorResponses, IdParams, iso, Uuid } from './common-schemas.ts';
import type { ApiContext } from './context.ts';

const tags = ['admin'];

const Customer = Type.Object(
  {
    id: Uuid,
    email: Type.String(),
    plan: Type.String(),
    createdAt: DateTime,
    databaseCount: Type.Integer({ description: 'Databases not deleted.' }),
    runningInstanceCount: Type.Integer({ description: 'Live instances (started, not removed).' }),
    buildsLast30Days: Type.Integer(),
    lastActivityAt: Type.Union([DateTime, Type.Null()], {
      description: 'The latest of its last audit event and its users’ last request.',
    }),
    planLimit: Type.Object({ databases: Type.Integer(), computeUnits: Type.Integer() }),
    overLimit: Type.Boolean({
      description:
        'Usage exceeds a limit of the plan: more databases, more compute units in use (beyond any overage), a larger instance size, a region or a poll interval the plan does not allow. Happens after a downgrade or an admin override.',
    }),
  },
  { $id: 'Customer' },
);

const PlanBody = Type.Object(
  { plan: Type.Enum([...PLANS], { description: 'The plan to put the customer on.' }) },
  { additionalProperties: false },
);

const CustomerPlan = Type.Object({ id: Uuid, plan: Type.String() }, { $id: 'CustomerPlan' });

const Deprovisioned = Type.Object(
  {
    ok: Type.Boolean({
      description:
        'True when every database is stopping or stopped; false when some were in the middle of an action the reconciler had already started (call again once it finishes).',
    }),
    databasesAffected: Type.Integer({
      description:
        'Databases whose instance is now being terminated, plus queued starts that were cancelled.',
    }),
  },
  { $id: 'Deprovisioned' },
);

/** Queued actions that already take the instance down: a deprovision leaves them be. */
const STOPPING: readonly string[] = ['terminate', 'delete'];

/** Statuses whose database a deprovision terminates. */
const TERMINABLE: readonly string[] = ['running', 'paused', 'failed'];

interface LiveDatabase {
  readonly account_id: string;
  readonly status: string;
  readonly instance_size: string;
  readonly goal: Goal | null;
  readonly region: string;
  readonly sync_mode: string;
  readonly sync_interval: number;
}

/** True when the account's usage breaks a limit of its plan (spec §2 Customer `overLimit`). */
function overLimit(plan: string, overage: OverageState, databases: LiveDatabase[]): boolean {
  const of = planOf(plan);
  if (databases.length > of.limits.databases) return true;
  const inUse = databases
    .filter((row) => (COMPUTE_STATUSES as readonly string[]).includes(row.status))
    .reduce((sum, row) => sum + databaseComputeUnits(row), 0);
  if (inUse > computeUnitsAllowed(of, overage)) return true;
  return databases.some(
    (row) =>
      ((INSTANCE_SIZE_NAMES as readonly string[]).includes(row.instance_size) &&
        instanceSizeViolation(of, row.instance_size as InstanceSize) !== undefined) ||
      regionViolation(of, row.region) !== undefined ||
      pollIntervalViolation(of, row.sync_mode, row.sync_interval) !== undefined,
  );
}

async function requireCustomer(db: Kysely<Store>, id: string): Promise<void> {
  const row = await db.selectFrom('accounts').select('id').where('id', '=', id).executeTakeFirst();
  if (!row) throw notFound('Customer');
}

/** Operator routes; only members of the identity provider's `service-admins` group. */
export function registerAdminRoutes(app: ApiServer, { db }: ApiContext): void {
  app.get(
    '/admin/customers',
    {
      config: { admin: true },
      schema: {
        tags,
        summary: 'Every customer account with its usage (admin only)',
        response: { 200: Type.Array(Customer), 403: ErrorResponse, ...errorResponses() },
      },
    },
    async () => {
      const rows = await db
        .selectFrom('accounts as a')
        .leftJoin('billing_accounts as b', 'b.account_id', 'a.id')
        .select([
          'a.id',
          'a.email',
          'a.plan',
          'a.created_at',
          sql<number>`(SELECT count(*) FROM instances i JOIN databases d ON d.id = i.database_id WHERE d.account_id = a.id AND d.deleted_at IS NULL AND i.removed_at IS NULL)::int`.as(
            'running_count',
          ),
          sql<number>`(SELECT count(*) FROM builds b WHERE b.account_id = a.id AND b.created_at > now() - interval '30 days')::int`.as(
            'builds_30d',
          ),
          sql<Date | null>`GREATEST((SELECT max(e.created_at) FROM audit_events e WHERE e.account_id = a.id), (SELECT max(u.last_seen_at) FROM users u WHERE u.account_id = a.id))`.as(
            'last_activity',
          ),
          'b.overage_enabled',
          'b.spending_cap_cents',
        ])
        .orderBy('a.created_at', 'asc')
        .execute();
      const databases = await db
        .selectFrom('databases')
        .select([
          'account_id',
          'status',
          'instance_size',
          'goal',
          'region',
          'sync_mode',
          'sync_interval',
        ])
        .where('deleted_at', 'is', null)
        .execute();
      const byAccount = Map.groupBy(databases, (row) => row.account_id);
      return rows.map((row) => {
        const { limits } = planOf(row.plan);
        const own = byAccount.get(row.id) ?? [];
        return {
          id: row.id,
          email: row.email,
          plan: row.plan,
          createdAt: iso(row.created_at),
          databaseCount: own.length,
          runningInstanceCount: row.running_count,
          buildsLast30Days: row.builds_30d,
          lastActivityAt: row.last_activity ? new Date(row.last_activity).toISOString() : null,
          planLimit: { databases: limits.databases, computeUnits: limits.computeUnits },
          overLimit: overLimit(
            row.plan,
            {
              enabled: row.overage_enabled ?? false,
              spendingCapCents: row.spending_cap_cents ?? null,
            },
            own,
          ),
        };
      });
    },
  );

  app.patch(
    '/admin/customers/:id/plan',
    {
      config: { admin: true },
      schema: {
        tags,
        summary: "Set a customer's plan without the payment provider (admin only)",
        description:
          'Overrides the plan at once; its limits apply from the next request. Overage is turned off on a plan without it. Recorded in the customer’s audit log as `account.plan_changed` with the admin’s identity. Does not touch the customer’s subscription at the payment provider.',
        params: IdParams,
        body: PlanBody,
        response: {
          200: CustomerPlan,
          403: ErrorResponse,
          404: ErrorResponse,
          ...errorResponses(),
        },
      },
    },
    async (request) => {
      const { id } = request.params;
      const { plan } = request.body;
      const { email, userId } = request.principal;
      await db.transaction().execute(async (tx) => {
        await requireCustomer(tx, id);
        await changePlan(tx, id, plan, { kind: 'admin', adminEmail: email, adminUserId: userId });
      });
      return { id, plan };
    },
  );

  app.post(
    '/admin/customers/:id/deprovision',
    {
      config: { admin: true },
      schema: {
        tags,
        summary: 'Terminate every instance of a customer (admin only)',
        description:
          'Records a `terminate` goal for each running, paused or failed database (the reconciler removes the instance; the database ends `terminated`, its settings and builds kept) and cancels queued actions that have not started (a queued provision is dropped; a queued action on a deployed database becomes a terminate). Actions the reconciler has already started are left to finish (`ok` false). Every change is in the customer’s audit log with the admin’s identity.',
        params: IdParams,
        response: {
          200: Deprovisioned,
          403: ErrorResponse,
          404: ErrorResponse,
          ...errorResponses(),
        },
      },
    },
    async (request) => {
      const { id: accountId } = request.params;
      const admin = { adminEmail: request.principal.email, adminUserId: request.principal.userId };
      return db.transaction().execute(async (tx) => {
        await requireCustomer(tx, accountId);
        const ids = await tx
          .selectFrom('databases')
          .select('id')
          .where('account_id', '=', accountId)
          .where('deleted_at', 'is', null)
          .orderBy('id')
          .execute();
        let affected = 0;
        let inProgress = 0;
        for (const { id } of ids) {
          const locked = await lockDatabase(tx, accountId, id);
          const { row } = locked;
          if (locked.matrix.terminate.allowed) {
            await queueGoal(tx, accountId, row, 'terminate', {}, admin);
            affected++;
            continue;
          }
          const goal = row.goal;
          if (!goal) continue; // draft, terminated: nothing runs
          if (STOPPING.includes(goal.action)) continue; // already on its way down
          if (goal.claimedAt) {
            inProgress++;
            continue;
          }
          // A queued action nobody started: cancel it, then terminate what was deployed.
          await tx
            .updateTable('databases')
            .set({ goal: null, status: goal.fromStatus, updated_at: new Date() })
            .where('id', '=', row.id)
            .execute();
          await auditAction(tx, accountId, row, 'cancel-goal', {
            fromStatus: row.status,
            toStatus: goal.fromStatus,
            cancelledAction: goal.action,
            ...admin,
          });
          if (TERMINABLE.includes(goal.fromStatus)) {
            const restored = { ...row, status: goal.fromStatus, goal: null };
            await queueGoal(tx, accountId, restored, 'terminate', {}, admin);
          }
          affected++;
        }
        await recordAudit(tx, {
          accountId,
          entityType: 'account',
          entityId: accountId,
          eventType: 'account.deprovisioned',
          payload: { databasesAffected: affected, inProgress, ...admin },
        });
        return { ok: inProgress === 0, databasesAffected: affected };
      });
    },
  );
}
