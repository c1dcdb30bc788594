import { recordAudit } from '../../adapters/events/audit-log.ts';
import { notify } from '../../adapters/events/notifications.ts';
import { finishDeployment, insertDeployment } from '../../adapters/store/deployment-store.ts';
import { appendLogLine } from '../../adapters/store/log-lines.ts';
import type { StoreDb } from '../../adapters/store/open-store.ts';
import { FINISHED_EVENT } from '../../domain/database-lifecycle.ts';
import { deployedConfigOf } from '../../domain/database-settings.ts';
import type { DeployPlan } from '../../domain/deploy-steps.ts';
import type { DeployProgress } from '../../domain/goal.ts';
import {
  deployGoalOf,
  finishedGoal,
  type GoalRun,
  goalOf,
  saveDeployProgress,
  updateClaimed,
} from './goal-run.ts';

/**
 * A deploy's records: its deployment begun, and its goal ended (succeeded, failed, or failed
 * before there was anything to deploy), each in one transaction with its audit events.
 */

/** Records the deployment (and a resize's new size) with the `deploy:prepare` phase. */
export async function recordDeployment(
  run: GoalRun,
  buildId: string,
  deploymentId: string,
): Promise<DeployProgress> {
  const goal = deployGoalOf(run);
  const progress: DeployProgress = { phase: 'deploy:prepare', deploymentId };
  await run.context.db.transaction().execute(async (tx) => {
    const databaseId = run.database.id;
    await insertDeployment(tx, { id: deploymentId, databaseId, buildId, action: goal.action });
    if (goal.action === 'resize' && (goal.instanceSize || goal.replicas)) {
      const { instanceSize, replicas } = goal;
      const resized = { ...(instanceSize ? { instance_size: instanceSize } : {}) };
      await updateClaimed(
        run,
        { ...resized, ...(replicas ? { replicas } : {}), updated_at: new Date() },
        tx,
      );
    }
    await saveDeployProgress(run, progress, tx);
  });
  await appendLogLine(run.context.db, deploymentId, `Deploying build ${buildId} (${goal.action})`);
  return progress;
}

/** The deploy succeeded: the database runs the build with its settings as deployed. */
export async function succeedDeployment(
  run: GoalRun,
  plan: DeployPlan,
  instanceId: string,
  endpointUrl: string,
): Promise<void> {
  const { context } = run;
  const database = run.database;
  const { action } = goalOf(run);
  const { buildId, deploymentId } = plan;
  await context.db.transaction().execute(async (tx) => {
    await finishDeployment(tx, deploymentId, 'succeeded');
    await updateClaimed(
      run,
      finishedGoal({
        status: 'running',
        current_build_id: buildId,
        deployed_config: JSON.stringify(deployedConfigOf(database)),
        last_error: null,
      }),
      tx,
    );
    const audited = { accountId: database.account_id, databaseId: database.id };
    await recordAudit(tx, {
      ...audited,
      entityType: 'deployment',
      entityId: deploymentId,
      eventType: 'deploy.succeeded',
      payload: { buildId, instanceId, action },
    });
    await recordAudit(tx, {
      ...audited,
      entityType: 'database',
      entityId: database.id,
      eventType: FINISHED_EVENT[action],
      payload: { buildId, deploymentId },
    });
    if (action === 'provision' || action === 'rebuild') {
      await context.events.emit(tx, {
        type: 'build.completed',
        ...audited,
        databaseName: database.name,
        fields: { endpointUrl },
        message: `${database.name} is built and running.`,
        severity: 'success',
      });
    }
  });
}

/**
 * The deploy failed: the database stays `running` on the instance that served before
 * (`stillServing`), or is `failed` when there is none.
 */
export async function failDeployment(
  run: GoalRun,
  plan: DeployPlan,
  reason: string,
  stillServing: boolean,
): Promise<void> {
  const database = run.database;
  const { action } = goalOf(run);
  await run.context.db.transaction().execute(async (tx) => {
    await finishDeployment(tx, plan.deploymentId, 'failed');
    // A resize that did not happen leaves the size and replicas the serving instance runs at.
    const served = stillServing ? database.deployed_config : null;
    const undoResize =
      action === 'resize' && served
        ? { instance_size: served.instanceSize, replicas: served.replicas ?? 1 }
        : {};
    const status = stillServing ? 'running' : 'failed';
    await updateClaimed(run, finishedGoal({ status, last_error: reason, ...undoResize }), tx);
    await recordAudit(tx, {
      accountId: database.account_id,
      databaseId: database.id,
      entityType: 'deployment',
      entityId: plan.deploymentId,
      eventType: 'deploy.failed',
      payload: { buildId: plan.buildId, reason, action },
    });
    await notifyDeployFailed(tx, database, reason);
  });
}

/** A deploy that cannot even start (nothing to deploy): the goal ends with the database failed. */
export async function failWithoutDeployment(run: GoalRun, reason: string): Promise<void> {
  const database = run.database;
  await run.context.db.transaction().execute(async (tx) => {
    await updateClaimed(run, finishedGoal({ status: 'failed', last_error: reason }), tx);
    await recordAudit(tx, {
      accountId: database.account_id,
      databaseId: database.id,
      entityType: 'database',
      entityId: database.id,
      eventType: 'deploy.failed',
      payload: { reason },
    });
    await notifyDeployFailed(tx, database, reason);
  });
}

/** The sticky notification of a failed deploy, whether or not it got as far as a deployment. */
function notifyDeployFailed(
  tx: StoreDb,
  database: GoalRun['database'],
  reason: string,
): Promise<void> {
  return notify(tx, {
    accountId: database.account_id,
    databaseId: database.id,
    eventType: 'deploy.failed',
    message: `Deploy of ${database.name} failed.`,
    detail: reason,
    severity: 'error',
    sticky: true,
  });
}
