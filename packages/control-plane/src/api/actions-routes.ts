import type { Kysely } from 'kysely';
import { Type } from 'typebox';
import type { Action } from '../domain/database-status.ts';
import { assertComputeUnits, assertInstanceSize } from '../domain/plan-enforcement.ts';
import { INSTANCE_SIZE_NAMES, planLimits } from '../domain/plans.ts';
import { InstanceClient } from '../drivers/instance-client.ts';
import { ApiError, notFound } from '../errors.ts';
import type { Goal, Store } from '../store/schema.ts';
import type { ApiServer } from './api-server.ts';
import { ErrorResponse, errorResponses, IdParams } from './common-schemas.ts';
import type { ApiContext } from './context.ts';
import {
  auditAction,
  type DatabaseRow,
  lockDatabase,
  type QueuedAction,
  queueGoal,
  requireAllowed,
} from './database-goals.ts';

const tags = ['actions'];

const ActionAccepted = Type.Object(
  {
    status: Type.String({
      description:
        'The database status after the call: the transitional status of a queued action (`building`, `deploying`, `pausing`, `terminating`, `deleting`), or the restored one after cancel-goal.',
    }),
  },
  { $id: 'ActionAccepted' },
);

const ReloadAccepted = Type.Object(
  {
    status: Type.Literal('running'),
    reloading: Type.Literal(true, {
      description: 'The instance started a full reload; it swaps the snapshot in when done.',
    }),
  },
  { $id: 'ReloadAccepted' },
);

const ReplicationState = Type.Object(
  { replication_paused: Type.Boolean() },
  { $id: 'ReplicationState' },
);

const ResizeBody = Type.Object(
  {
    instanceSize: Type.Union(
      INSTANCE_SIZE_NAMES.map((size) => Type.Literal(size)),
      { description: 'The new size; at most the plan’s maxInstanceSize.' },
    ),
  },
  { additionalProperties: false },
);

const RedeployBody = Type.Object(
  {
    buildId: Type.String({ format: 'uuid', description: 'A succeeded build of this database.' }),
  },
  { additionalProperties: false },
);

/**
 * Actions after which the database's instance runs: each must fit the plan's compute units
 * (docs/control-plane/billing.md). Pause and terminate only free units.
 */
const STARTS_INSTANCE: ReadonlySet<QueuedAction> = new Set([
  'provision',
  'rebuild',
  'reconfigure',
  'resume',
]);

const SUMMARIES: Record<Action, string> = {
  provision: 'Provision: build the database and start its instance (queued)',
  rebuild: 'Rebuild: a new build from the current settings, then a deploy (queued)',
  reconfigure: 'Reconfigure: redeploy the current build with the current runtime settings (queued)',
  redeploy: 'Redeploy a past succeeded build; no new build job (queued)',
  resize: 'Resize the instance (queued)',
  pause: 'Pause: stop the instance, keep everything else (queued)',
  resume: 'Resume a paused database (queued)',
  terminate:
    'Terminate: remove the instance, keep the database; it can be provisioned again (queued)',
  delete: 'Delete the database (immediate without an instance, else queued after a teardown)',
  reload: 'Reload: the instance re-reads the whole source now (immediate)',
  'pause-replication':
    'Pause replication: the snapshot freezes, queries keep being served (immediate)',
  'resume-replication': 'Resume replication (immediate)',
  'cancel-goal': 'Cancel the queued action before the reconciler starts it (immediate)',
};

/** A client for the database's live instance, or 503 when it has none. */
async function liveInstance(
  tx: Kysely<Store>,
  context: ApiContext,
  row: DatabaseRow,
): Promise<InstanceClient> {
  const instance = await tx
    .selectFrom('instances')
    .select(['endpoint_url', 'control_key_id'])
    .where('database_id', '=', row.id)
    .where('removed_at', 'is', null)
    .executeTakeFirst();
  if (!instance?.endpoint_url) {
    throw new ApiError('instance_unavailable', 'The database has no running instance.');
  }
  return new InstanceClient(
    instance.endpoint_url,
    context.secrets.openBuffer(row.key_secret_enc),
    instance.control_key_id,
  );
}

interface InstanceErrorBody {
  error?: { code?: string; message?: string };
}

/**
 * POSTs to the instance. A 409 (reload_busy, cap_degraded) becomes action_not_allowed with the
 * instance's own message; no answer, or any other failure, is instance_unavailable.
 */
async function postToInstance(
  client: InstanceClient,
  path: string,
  context: ApiContext,
): Promise<void> {
  let response: { status: number; body: InstanceErrorBody | undefined };
  try {
    response = await client.json<InstanceErrorBody>('POST', path);
  } catch (error) {
    context.log.warn({ path, reason: (error as Error).name }, 'instance did not answer');
    throw new ApiError(
      'instance_unavailable',
      'The instance did not answer; retry when its status is running.',
    );
  }
  if (response.status >= 200 && response.status < 300) return;
  const message = response.body?.error?.message;
  if (response.status === 409 && message) throw new ApiError('action_not_allowed', message);
  context.log.warn({ path, status: response.status }, 'instance refused a control call');
  throw new ApiError(
    'instance_unavailable',
    'The instance could not do this now; retry when its status is running.',
  );
}

/** The database action endpoints: one route per action of the allowed-actions matrix. */
export function registerActionsRoutes(app: ApiServer, context: ApiContext): void {
  const { db } = context;
  const queuedResponses = {
    202: ActionAccepted,
    404: ErrorResponse,
    409: ErrorResponse,
    ...errorResponses(),
  };

  const plainQueued: QueuedAction[] = [
    'provision',
    'rebuild',
    'reconfigure',
    'pause',
    'resume',
    'terminate',
  ];
  for (const action of plainQueued) {
    app.post(
      `/databases/:id/${action}`,
      {
        schema: {
          tags,
          summary: SUMMARIES[action],
          params: IdParams,
          response: STARTS_INSTANCE.has(action)
            ? { ...queuedResponses, 403: ErrorResponse }
            : queuedResponses,
        },
      },
      async (request, reply) => {
        const { accountId } = request.principal;
        const status = await db.transaction().execute(async (tx) => {
          const locked = await lockDatabase(tx, accountId, request.params.id);
          requireAllowed(locked, action);
          if (STARTS_INSTANCE.has(action)) {
            await assertComputeUnits(tx, accountId, locked.row.id, locked.row.instance_size);
          }
          return queueGoal(tx, accountId, locked.row, action);
        });
        return reply.status(202).send({ status });
      },
    );
  }

  app.post(
    '/databases/:id/resize',
    {
      schema: {
        tags,
        summary: SUMMARIES.resize,
        params: IdParams,
        body: ResizeBody,
        response: { ...queuedResponses, 403: ErrorResponse },
      },
    },
    async (request, reply) => {
      const { accountId } = request.principal;
      const size = request.body.instanceSize;
      const status = await db.transaction().execute(async (tx) => {
        const locked = await lockDatabase(tx, accountId, request.params.id);
        requireAllowed(locked, 'resize');
        assertInstanceSize({ plan: locked.plan, limits: planLimits(locked.plan) }, size);
        if (size === locked.row.instance_size) {
          throw new ApiError(
            'validation_failed',
            `body.instanceSize is already ${size}; choose another size.`,
          );
        }
        await assertComputeUnits(tx, accountId, locked.row.id, size);
        return queueGoal(tx, accountId, locked.row, 'resize', { instanceSize: size });
      });
      return reply.status(202).send({ status });
    },
  );

  app.post(
    '/databases/:id/redeploy',
    {
      schema: {
        tags,
        summary: SUMMARIES.redeploy,
        description:
          'Re-applies the infrastructure with the artifact of a past succeeded build of this database (spec §3).',
        params: IdParams,
        body: RedeployBody,
        response: { ...queuedResponses, 403: ErrorResponse },
      },
    },
    async (request, reply) => {
      const { accountId } = request.principal;
      const { buildId } = request.body;
      const status = await db.transaction().execute(async (tx) => {
        const locked = await lockDatabase(tx, accountId, request.params.id);
        requireAllowed(locked, 'redeploy');
        await assertComputeUnits(tx, accountId, locked.row.id, locked.row.instance_size);
        const build = await tx
          .selectFrom('builds')
          .select(['id', 'status'])
          .where('id', '=', buildId)
          .where('database_id', '=', locked.row.id)
          .where('account_id', '=', accountId)
          .executeTakeFirst();
        if (!build) throw notFound('Build');
        if (build.status !== 'succeeded') {
          throw new ApiError(
            'validation_failed',
            `body.buildId names a build that is ${build.status}; only a succeeded build can be redeployed.`,
          );
        }
        return queueGoal(tx, accountId, locked.row, 'redeploy', { buildId });
      });
      return reply.status(202).send({ status });
    },
  );

  app.delete(
    '/databases/:id',
    {
      schema: {
        tags,
        summary: SUMMARIES.delete,
        description:
          'A database with nothing deployed (draft, terminated, or failed before any build succeeded) is deleted at once (204). Otherwise its instance is torn down first: 202 with status `deleting`, and the reconciler deletes it.',
        params: IdParams,
        response: { ...queuedResponses, 204: Type.Null() },
      },
    },
    async (request, reply) => {
      const { accountId } = request.principal;
      const status = await db.transaction().execute(async (tx) => {
        const locked = await lockDatabase(tx, accountId, request.params.id);
        requireAllowed(locked, 'delete');
        if (locked.matrix.delete.mode === 'queued') {
          return queueGoal(tx, accountId, locked.row, 'delete');
        }
        await tx
          .updateTable('databases')
          .set({ status: 'deleting', deleted_at: new Date(), updated_at: new Date() })
          .where('id', '=', locked.row.id)
          .execute();
        await auditAction(tx, accountId, locked.row, 'delete', {
          fromStatus: locked.row.status,
          toStatus: 'deleted',
        });
        return null;
      });
      if (status === null) return reply.status(204).send(null);
      return reply.status(202).send({ status });
    },
  );

  app.post(
    '/databases/:id/cancel-goal',
    {
      schema: {
        tags,
        summary: SUMMARIES['cancel-goal'],
        description:
          'Only while the reconciler has not started the action; restores the status the database had before it.',
        params: IdParams,
        response: {
          200: ActionAccepted,
          404: ErrorResponse,
          409: ErrorResponse,
          ...errorResponses(),
        },
      },
    },
    async (request) => {
      const { accountId } = request.principal;
      const status = await db.transaction().execute(async (tx) => {
        const locked = await lockDatabase(tx, accountId, request.params.id);
        requireAllowed(locked, 'cancel-goal');
        const goal = locked.row.goal as Goal;
        await tx
          .updateTable('databases')
          .set({ goal: null, status: goal.fromStatus, updated_at: new Date() })
          .where('id', '=', locked.row.id)
          .execute();
        await auditAction(tx, accountId, locked.row, 'cancel-goal', {
          fromStatus: locked.row.status,
          toStatus: goal.fromStatus,
          cancelledAction: goal.action,
        });
        return goal.fromStatus;
      });
      return { status };
    },
  );

  const instanceErrors = {
    404: ErrorResponse,
    409: ErrorResponse,
    503: ErrorResponse,
    ...errorResponses(),
  };

  app.post(
    '/databases/:id/reload',
    {
      schema: {
        tags,
        summary: SUMMARIES.reload,
        description:
          'The instance answers at once and reloads in the background; 409 `action_not_allowed` carries the instance’s reason when a sync flush is mid-cycle (reload_busy) or the instance is cap-degraded (resize instead).',
        params: IdParams,
        response: { 202: ReloadAccepted, ...instanceErrors },
      },
    },
    async (request, reply) => {
      const { accountId } = request.principal;
      await db.transaction().execute(async (tx) => {
        const locked = await lockDatabase(tx, accountId, request.params.id);
        requireAllowed(locked, 'reload');
        await postToInstance(await liveInstance(tx, context, locked.row), '/reload', context);
        await auditAction(tx, accountId, locked.row, 'reload', {
          fromStatus: locked.row.status,
          toStatus: locked.row.status,
        });
      });
      return reply.status(202).send({ status: 'running', reloading: true });
    },
  );

  for (const action of ['pause-replication', 'resume-replication'] as const) {
    const paused = action === 'pause-replication';
    app.post(
      `/databases/:id/${action}`,
      {
        schema: {
          tags,
          summary: SUMMARIES[action],
          description: paused
            ? 'Takes effect at the next sync tick; a reload already in flight completes first (spec §3). Stays paused across redeploys until resumed.'
            : 'The instance catches up from where it paused.',
          params: IdParams,
          response: { 200: ReplicationState, ...instanceErrors },
        },
      },
      async (request) => {
        const { accountId } = request.principal;
        await db.transaction().execute(async (tx) => {
          const locked = await lockDatabase(tx, accountId, request.params.id);
          requireAllowed(locked, action);
          const client = await liveInstance(tx, context, locked.row);
          await postToInstance(
            client,
            paused ? '/replication/pause' : '/replication/resume',
            context,
          );
          await tx
            .updateTable('databases')
            .set({ replication_paused: paused, updated_at: new Date() })
            .where('id', '=', locked.row.id)
            .execute();
          await auditAction(tx, accountId, locked.row, action, {
            fromStatus: locked.row.status,
            toStatus: locked.row.status,
            replicationPaused: paused,
          });
        });
        return { replication_paused: paused };
      },
    );
  }
}
