import { recordAudit } from '../../adapters/events/audit-log.ts';
import { buildStatusOf } from '../../adapters/store/build-store.ts';
import { FINISHED_EVENT } from '../../domain/database-lifecycle.ts';
import { unroutedMessage } from '../../domain/endpoint-messages.ts';
import type { BuildGoal } from '../../domain/goal.ts';
import { queueBuild } from '../resources/builds/queue-build.ts';
import { buildToDeploy } from './build-to-deploy.ts';
import { deploy } from './deploy.ts';
import { dropReplicationState } from './drop-replication-state.ts';
import {
  DONE,
  finishedGoal,
  type GoalOutcome,
  type GoalRun,
  goalOf,
  saveGoal,
  updateClaimed,
} from './goal-run.ts';
import { stopLiveInstance } from './live-instance.ts';

/** How often a goal waiting for its build looks again. */
const BUILD_POLL_MS = 1000;

/**
 * Moves the claimed database's goal forward as far as it can go now: to its end, or to a
 * point where it waits (for a build). Every step is idempotent and records its phase first.
 */
export function advanceGoal(run: GoalRun): Promise<GoalOutcome> {
  const goal = goalOf(run);
  switch (goal.action) {
    case 'provision':
    case 'rebuild':
      return buildThenDeploy(run, goal);
    case 'redeploy':
      return deploy(run, goal.buildId);
    case 'reconfigure':
    case 'resize':
    case 'resume':
      return buildToDeploy(run.context.db, run.database).then((buildId) => deploy(run, buildId));
    case 'pause':
    case 'terminate':
    case 'delete':
      return stopInstance(run, goal.action);
  }
}

async function buildThenDeploy(run: GoalRun, goal: BuildGoal): Promise<GoalOutcome> {
  const { context } = run;
  if (goal.phase?.startsWith('deploy:')) return deploy(run, goal.buildId);
  let buildId = goal.phase ? goal.buildId : undefined;
  if (!buildId) {
    // The build and the goal that waits for it are recorded together: never two builds.
    buildId = await context.db.transaction().execute(async (tx) => {
      const queued = await queueBuild(tx, run.database);
      await saveGoal(run, { ...goal, phase: 'build', buildId: queued }, tx);
      return queued;
    });
  }
  const build = await buildStatusOf(context.db, buildId);
  if (build?.status === 'succeeded') {
    await updateClaimed(run, {
      goal: JSON.stringify({ ...goalOf(run), phase: 'deploy' }),
      status: 'deploying',
      updated_at: new Date(),
    });
    return deploy(run, buildId);
  }
  if (build && build.status !== 'failed') return { kind: 'wait', retryAfterMs: BUILD_POLL_MS };
  const error = build?.error ?? 'The build disappeared.';
  const database = run.database;
  await context.db.transaction().execute(async (tx) => {
    await updateClaimed(run, finishedGoal({ status: 'failed', last_error: error }), tx);
    await context.events.emit(tx, {
      type: 'build.failed',
      accountId: database.account_id,
      databaseId: database.id,
      databaseName: database.name,
      fields: { error },
      message: `The build of ${database.name} failed.`,
      severity: 'error',
      sticky: true,
    });
  });
  return DONE;
}

/**
 * pause: the instance stops and the database is `paused` (resume deploys its build again).
 * terminate: the instance stops, the source's replication state is dropped, and the database
 * is `terminated` (provision starts over). delete: as terminate, then the database is gone.
 */
async function stopInstance(
  run: GoalRun,
  action: 'pause' | 'terminate' | 'delete',
): Promise<GoalOutcome> {
  const { context } = run;
  // The endpoint stays the database's: it answers 503 with what brings it back, until then.
  const stopped = await stopLiveInstance(
    context,
    run.database.id,
    unroutedMessage(action === 'pause' ? 'paused' : 'terminated'),
  );
  if (action === 'delete') await context.driver.closeEndpoint(run.database.id);
  if (action !== 'pause') {
    await dropReplicationState(context, run.owner, run.database);
    await context.driver.dropCheckpoints(run.database.id);
  }
  const database = run.database;
  await context.db.transaction().execute(async (tx) => {
    await updateClaimed(
      run,
      finishedGoal(
        action === 'pause'
          ? { status: 'paused' }
          : action === 'terminate'
            ? { status: 'terminated' }
            : { deleted_at: new Date() },
      ),
      tx,
    );
    await recordAudit(tx, {
      accountId: database.account_id,
      databaseId: database.id,
      entityType: 'database',
      entityId: database.id,
      eventType: FINISHED_EVENT[action],
      payload: stopped ? { instanceId: stopped.id } : undefined,
    });
  });
  return DONE;
}
