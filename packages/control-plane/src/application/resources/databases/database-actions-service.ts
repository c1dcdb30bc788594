import { InstanceClient } from '@replix/instance-protocol';
import type { Kysely } from 'kysely';
import { replicaUrlsOf } from '../../../adapters/drivers/replica-urls.ts';
import { buildOfDatabase } from '../../../adapters/store/build-store.ts';
import type { DatabaseRow } from '../../../adapters/store/database-store.ts';
import { updateDatabaseRow } from '../../../adapters/store/database-store.ts';
import { dropQueuedGoal } from '../../../adapters/store/goal-store.ts';
import { liveInstanceOf } from '../../../adapters/store/instance-store.ts';
import type { Store } from '../../../adapters/store/schema.ts';
import { ownedDatabase } from '../../../adapters/store/tenancy.ts';
import type { ApiContext } from '../../../api/context.ts';
import type { DatabaseStatus, QueuedAction } from '../../../domain/database-lifecycle.ts';
import { ApiError, notFound } from '../../../domain/errors.ts';
import type { Goal } from '../../../domain/goal.ts';
import { assertInstanceSize, assertReplicas } from '../../../domain/plan-enforcement.ts';
import { type InstanceSize, planLimits } from '../../../domain/plans.ts';
import { assertComputeUnits } from '../../payments/plan-usage.ts';
import { auditAction, lockDatabase, queueGoal, requireAllowed } from './database-goals.ts';
import { type PendingChange, pendingChangesOf } from './pending-changes.ts';

type Context = Pick<ApiContext, 'db' | 'secrets' | 'log'>;

/** The queued actions that take no input: provision, rebuild, reconfigure, pause, resume, terminate. */
export type PlainQueuedAction = Exclude<QueuedAction, 'resize' | 'redeploy' | 'delete'>;

/**
 * Actions after which the database's instance runs: each must fit the plan's compute units
 * (docs/control-plane/billing.md). Pause and terminate only free units.
 */
export const STARTS_INSTANCE: ReadonlySet<QueuedAction> = new Set([
  'provision',
  'rebuild',
  'reconfigure',
  'resume',
]);

/** Queues an action that takes no input; returns the transitional status. */
export function queueAction(
  { db }: Context,
  accountId: string,
  id: string,
  action: PlainQueuedAction,
): Promise<DatabaseStatus> {
  return db.transaction().execute(async (tx) => {
    const locked = await lockDatabase(tx, accountId, id);
    requireAllowed(locked, action);
    if (STARTS_INSTANCE.has(action)) {
      await assertComputeUnits(
        tx,
        accountId,
        locked.row.id,
        locked.row.instance_size,
        locked.row.replicas,
      );
    }
    return queueGoal(tx, accountId, locked.row, action);
  });
}

/** The database's pending changes that only a rebuild applies (a reconfigure leaves them). */
export async function changesOnlyRebuildApplies(
  { db }: Context,
  accountId: string,
  id: string,
): Promise<PendingChange[]> {
  const row = await ownedDatabase(db, accountId, id);
  return (await pendingChangesOf(db, row)).filter((change) => change.appliedBy === 'rebuild');
}

/** What a resize changes: the instance size, the replica count, or both. */
export interface ResizeChange {
  readonly instanceSize?: InstanceSize | undefined;
  readonly replicas?: number | undefined;
}

/**
 * Queues a resize to another size and/or replica count the plan allows: a redeploy with zero
 * downtime (the new instance, with all its replicas healthy, takes over from the old one).
 */
export function queueResize(
  { db }: Context,
  accountId: string,
  id: string,
  change: ResizeChange,
): Promise<DatabaseStatus> {
  return db.transaction().execute(async (tx) => {
    const locked = await lockDatabase(tx, accountId, id);
    requireAllowed(locked, 'resize');
    const plan = { plan: locked.plan, limits: planLimits(locked.plan) };
    const { instanceSize, replicas } = change;
    if (instanceSize === undefined && replicas === undefined) {
      throw new ApiError(
        'validation_failed',
        'body must have instanceSize or replicas (or both): the size or replica count to move to.',
      );
    }
    if (instanceSize !== undefined) assertInstanceSize(plan, instanceSize);
    if (replicas !== undefined) assertReplicas(plan, replicas);
    const size = instanceSize ?? (locked.row.instance_size as InstanceSize);
    const count = replicas ?? locked.row.replicas;
    if (size === locked.row.instance_size && count === locked.row.replicas) {
      throw new ApiError(
        'validation_failed',
        instanceSize !== undefined && replicas === undefined
          ? `body.instanceSize is already ${size}; choose another size.`
          : `The database already runs ${size} with ${count} replica${count === 1 ? '' : 's'}; choose another size or replica count.`,
      );
    }
    await assertComputeUnits(tx, accountId, locked.row.id, size, count);
    return queueGoal(tx, accountId, locked.row, 'resize', {
      ...(instanceSize !== undefined ? { instanceSize } : {}),
      ...(replicas !== undefined ? { replicas } : {}),
    });
  });
}

/** Queues a redeploy of a past succeeded build of the database. */
export function queueRedeploy(
  { db }: Context,
  accountId: string,
  id: string,
  buildId: string,
): Promise<DatabaseStatus> {
  return db.transaction().execute(async (tx) => {
    const locked = await lockDatabase(tx, accountId, id);
    requireAllowed(locked, 'redeploy');
    await assertComputeUnits(
      tx,
      accountId,
      locked.row.id,
      locked.row.instance_size,
      locked.row.replicas,
    );
    const build = await buildOfDatabase(tx, accountId, locked.row.id, buildId);
    if (!build) throw notFound('Build');
    if (build.status !== 'succeeded') {
      throw new ApiError(
        'validation_failed',
        `body.buildId names a build that is ${build.status}; only a succeeded build can be redeployed.`,
      );
    }
    return queueGoal(tx, accountId, locked.row, 'redeploy', { buildId });
  });
}

/**
 * Deletes the database: at once when nothing is deployed (null), else queued after a teardown
 * (the transitional status).
 */
export function deleteDatabase(
  { db }: Context,
  accountId: string,
  id: string,
): Promise<DatabaseStatus | null> {
  return db.transaction().execute(async (tx) => {
    const locked = await lockDatabase(tx, accountId, id);
    requireAllowed(locked, 'delete');
    if (locked.matrix.delete.mode === 'queued') {
      return queueGoal(tx, accountId, locked.row, 'delete');
    }
    await updateDatabaseRow(tx, locked.row.id, { status: 'deleting', deleted_at: new Date() });
    await auditAction(tx, accountId, locked.row, 'delete', {
      fromStatus: locked.row.status,
      toStatus: 'deleted',
    });
    return null;
  });
}

/** Cancels the queued goal before the reconciler starts it; returns the restored status. */
export function cancelGoal({ db }: Context, accountId: string, id: string): Promise<string> {
  return db.transaction().execute(async (tx) => {
    const locked = await lockDatabase(tx, accountId, id);
    requireAllowed(locked, 'cancel-goal');
    const goal = locked.row.goal as Goal;
    await dropQueuedGoal(tx, locked.row.id, goal.fromStatus);
    await auditAction(tx, accountId, locked.row, 'cancel-goal', {
      fromStatus: locked.row.status,
      toStatus: goal.fromStatus,
      cancelledAction: goal.action,
    });
    return goal.fromStatus;
  });
}

/** Asks every replica of the running instance to reload the whole source now. */
export async function reloadDatabase(context: Context, accountId: string, id: string) {
  await context.db.transaction().execute(async (tx) => {
    const locked = await lockDatabase(tx, accountId, id);
    requireAllowed(locked, 'reload');
    await postToEveryReplica(await liveReplicas(tx, context, locked.row), '/reload', context);
    await auditAction(tx, accountId, locked.row, 'reload', {
      fromStatus: locked.row.status,
      toStatus: locked.row.status,
    });
  });
}

/**
 * Pauses or resumes the replication of every replica of the running instance and records it on
 * the database.
 */
export async function setReplicationPaused(
  context: Context,
  accountId: string,
  id: string,
  paused: boolean,
) {
  const action = paused ? 'pause-replication' : 'resume-replication';
  await context.db.transaction().execute(async (tx) => {
    const locked = await lockDatabase(tx, accountId, id);
    requireAllowed(locked, action);
    const clients = await liveReplicas(tx, context, locked.row);
    await postToEveryReplica(
      clients,
      paused ? '/replication/pause' : '/replication/resume',
      context,
    );
    await updateDatabaseRow(tx, locked.row.id, { replication_paused: paused });
    await auditAction(tx, accountId, locked.row, action, {
      fromStatus: locked.row.status,
      toStatus: locked.row.status,
      replicationPaused: paused,
    });
  });
}

/** A client for each replica of the database's live instance, or 503 when it has none. */
async function liveReplicas(
  tx: Kysely<Store>,
  context: Context,
  row: DatabaseRow,
): Promise<InstanceClient[]> {
  const instance = await liveInstanceOf(tx, row.id);
  const urls = instance ? replicaUrlsOf(instance) : [];
  if (!instance || urls.length === 0) {
    throw new ApiError('instance_unavailable', 'The database has no running instance.');
  }
  const secret = context.secrets.openBuffer(row.key_secret_enc);
  return urls.map((url) => new InstanceClient(url, secret, instance.control_key_id));
}

/**
 * POSTs to every replica at once (each follows the source itself, so each must be told). The
 * first refusal or silence is the answer; the calls are idempotent (pause, resume) or refused
 * while under way (reload_busy), so the user may repeat one that reached only some replicas.
 */
async function postToEveryReplica(
  clients: readonly InstanceClient[],
  path: string,
  context: Context,
): Promise<void> {
  const results = await Promise.allSettled(
    clients.map((client) => postToInstance(client, path, context)),
  );
  const failed = results.find((result) => result.status === 'rejected');
  if (failed) throw failed.reason;
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
  context: Context,
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
