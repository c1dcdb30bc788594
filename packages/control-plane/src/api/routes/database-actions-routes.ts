import { Type } from 'typebox';
import {
  ErrorResponse,
  errorResponses,
  IdParams,
} from '../../application/resources/common-schemas.ts';
import {
  cancelGoal,
  changesOnlyRebuildApplies,
  deleteDatabase,
  type PlainQueuedAction,
  queueAction,
  queueRedeploy,
  queueResize,
  reloadDatabase,
  STARTS_INSTANCE,
  setReplicationPaused,
} from '../../application/resources/databases/database-actions-service.ts';
import {
  ActionAccepted,
  ReconfigureAccepted,
  RedeployBody,
  ReloadAccepted,
  ReplicationState,
  ResizeBody,
} from '../../application/resources/databases/databases-schemas.ts';
import type { Action } from '../../domain/database-lifecycle.ts';
import type { ApiServer } from '../api-server.ts';
import type { ApiContext } from '../context.ts';

const tags = ['actions'];

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

/** The database action endpoints: one route per action of the allowed-actions matrix. */
export function registerActionsRoutes(app: ApiServer, context: ApiContext): void {
  const queuedResponses = {
    202: ActionAccepted,
    404: ErrorResponse,
    409: ErrorResponse,
    ...errorResponses(),
  };

  const plainQueued: PlainQueuedAction[] = ['provision', 'rebuild', 'pause', 'resume', 'terminate'];
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
        const status = await queueAction(
          context,
          request.principal.accountId,
          request.params.id,
          action,
        );
        return reply.status(202).send({ status });
      },
    );
  }

  app.post(
    '/databases/:id/reconfigure',
    {
      schema: {
        tags,
        summary: SUMMARIES.reconfigure,
        description:
          'Applies the runtime settings (`pendingChanges` with `appliedBy: reconfigure`). A changed source schema or schema config needs a rebuild: the answer lists it in `notApplied`.',
        params: IdParams,
        response: { ...queuedResponses, 202: ReconfigureAccepted, 403: ErrorResponse },
      },
    },
    async (request, reply) => {
      const { accountId } = request.principal;
      const status = await queueAction(context, accountId, request.params.id, 'reconfigure');
      // Said in the answer, not left for the user to find: what this reconfigure cannot apply.
      const notApplied = await changesOnlyRebuildApplies(context, accountId, request.params.id);
      return reply.status(202).send({ status, notApplied });
    },
  );

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
      const status = await queueResize(
        context,
        request.principal.accountId,
        request.params.id,
        request.body,
      );
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
      const status = await queueRedeploy(
        context,
        request.principal.accountId,
        request.params.id,
        request.body.buildId,
      );
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
      const status = await deleteDatabase(context, request.principal.accountId, request.params.id);
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
    async (request) => ({
      status: await cancelGoal(context, request.principal.accountId, request.params.id),
    }),
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
      await reloadDatabase(context, request.principal.accountId, request.params.id);
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
        await setReplicationPaused(context, request.principal.accountId, request.params.id, paused);
        return { replication_paused: paused };
      },
    );
  }
}
