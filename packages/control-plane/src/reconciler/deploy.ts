import { randomUUID } from 'node:crypto';
import { setTimeout as sleep } from 'node:timers/promises';
import { newKeyId } from '@replix/instance';
import { inSpan, withTraceHeaders } from '@replix/instance/tracing';
import { FINISHED_EVENT, isQueuedAction } from '../domain/database-lifecycle.ts';
import { deployedConfigOf } from '../domain/database-settings.ts';
import { unroutedMessage } from '../domain/endpoint-messages.ts';
import type { Driver, Endpoint } from '../drivers/driver.ts';
import { InstanceStartError } from '../drivers/process-driver.ts';
import { currentReplicaUrls } from '../drivers/replica-urls.ts';
import { recordAudit } from '../events/audit-log.ts';
import { notify } from '../events/notifications.ts';
import type { StoreDb } from '../store/open-store.ts';
import { deployFailureReason } from './deploy-failure-reason.ts';
import { appendDeploymentLog } from './deployment-log.ts';
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
import { instanceLaunchFor, LaunchError } from './instance-launch-for.ts';
import { liveInstanceOf, markRemoved } from './live-instance.ts';
import { recordReplicationSource } from './replication-sources.ts';

/** How long a new instance gets to load its snapshot before the deploy fails. */
export const SNAPSHOT_LOAD_TIMEOUT_MS = 5 * 60_000;
const HEALTH_POLL_MS = 250;
const QUOTED_LOG_LINES = 10;

/** Blanks credentials in URLs of quoted log lines (`//user:secret@` → `//user:***@`). */
function withoutCredentials(text: string): string {
  return text.replace(/(\/\/[^/\s:@]*:)[^@\s/]*@/g, '$1***@');
}

/**
 * Deploys `buildId` as the database's instance without dropping a query, in phases a successor
 * can resume (each step idempotent): `deploy:prepare` (deployment recorded; the new instance is
 * recorded, as a standby beside the serving one if there is one), `deploy:start` (start it
 * through the driver, which adopts it if it already runs), `deploy:wait` (wait until its
 * /health answers 200: the snapshot is in), then the switch: the database's endpoint is
 * pointed at the new instance, which becomes the serving one (`deploy:retire`), and the
 * previous one stops: it stops accepting, finishes its queries in flight, then exits. The
 * endpoint (its URL) is the database's for life. Then the database is `running` with this
 * build and configuration. When the new instance fails, the previous one keeps serving (the
 * database stays `running`, the deployment is `failed` with the reason); with none, the
 * database is `failed`.
 */
export async function deploy(
  run: GoalRun,
  buildId: string | null | undefined,
): Promise<GoalOutcome> {
  const { context } = run;
  let goal = goalOf(run);
  if (!buildId) {
    return failWithoutDeployment(
      run,
      'There is no succeeded build to deploy: use Rebuild instead.',
    );
  }
  if (!goal.deploymentId || !goal.phase?.startsWith('deploy:')) {
    const deploymentId = randomUUID();
    await context.db.transaction().execute(async (tx) => {
      await tx
        .insertInto('deployments')
        .values({
          id: deploymentId,
          database_id: run.database.id,
          build_id: buildId,
          action: goal.action,
          status: 'in_progress',
        })
        .execute();
      if (goal.action === 'resize' && (goal.instanceSize || goal.replicas)) {
        await updateClaimed(
          run,
          {
            ...(goal.instanceSize ? { instance_size: goal.instanceSize } : {}),
            ...(goal.replicas ? { replicas: goal.replicas } : {}),
            updated_at: new Date(),
          },
          tx,
        );
      }
      await saveGoal(run, { ...goal, phase: 'deploy:prepare', deploymentId }, tx);
    });
    goal = goalOf(run);
    await appendDeploymentLog(
      context.db,
      deploymentId,
      `Deploying build ${buildId} (${goal.action})`,
    );
  }
  const deploymentId = goal.deploymentId as string;
  const log = (message: string) => appendDeploymentLog(context.db, deploymentId, message);
  const endpoint = await openEndpoint(run);

  // `deploy:replace`: the first phase's name before stable endpoints (a goal recorded then).
  if (goal.phase === 'deploy:prepare' || goal.phase === 'deploy:replace') {
    const previous = await liveInstanceOf(context.db, run.database.id);
    // A standby left by an earlier try of this deploy goes first: one standby at most.
    const leftovers = await context.db
      .selectFrom('instances')
      .select('id')
      .where('database_id', '=', run.database.id)
      .where('removed_at', 'is', null)
      .where('standby', '=', true)
      .execute();
    for (const leftover of leftovers) {
      await context.driver.stop(leftover.id);
      await markRemoved(context.db, leftover.id);
    }
    const instanceId = randomUUID();
    await context.db.transaction().execute(async (tx) => {
      await tx
        .insertInto('instances')
        .values({
          id: instanceId,
          database_id: run.database.id,
          build_id: buildId,
          driver: context.driver.name,
          control_key_id: newKeyId(),
          endpoint_url: endpoint.url,
          standby: previous !== undefined,
        })
        .execute();
      await saveGoal(
        run,
        { ...goalOf(run), phase: 'deploy:start', instanceId, previousInstanceId: previous?.id },
        tx,
      );
    });
    goal = goalOf(run);
  }
  run.signal.throwIfAborted();

  // A goal recorded before stable endpoints names no instance: its new one is the live one.
  const instance = goal.instanceId
    ? await context.db
        .selectFrom('instances')
        .selectAll()
        .where('id', '=', goal.instanceId)
        .where('removed_at', 'is', null)
        .executeTakeFirst()
    : await liveInstanceOf(context.db, run.database.id);
  if (!instance)
    return failDeploy(run, deploymentId, buildId, 'The new instance record is missing.');

  const spanAttributes = {
    'replix.deployment.id': deploymentId,
    'replix.instance.id': instance.id,
  };
  /** Starts (or adopts) the instance; its private address, or the failed goal's outcome. */
  const startOnce = async (): Promise<string | GoalOutcome> => {
    await log(`Starting instance ${instance.id}`);
    try {
      const { launch, keysVersion, source } = await instanceLaunchFor(
        context,
        run.database,
        instance,
        buildId,
      );
      await recordReplicationSource(context.db, run.database, source, launch.replicas);
      const handle = await context.driver.start(launch);
      const replicaUrls = await currentReplicaUrls(context.driver, instance.id);
      await context.db.transaction().execute(async (tx) => {
        await tx
          .updateTable('instances')
          .set({
            private_url: handle.privateUrl,
            replica_urls: JSON.stringify(replicaUrls),
            port: handle.port,
            pid: handle.pid,
            container_ref: handle.containerRef,
            keys_version: keysVersion,
            updated_at: new Date(),
          })
          .where('id', '=', instance.id)
          .execute();
        await saveGoal(run, { ...goalOf(run), phase: 'deploy:wait' }, tx);
      });
      await log(
        `Instance ${instance.id} started${handle.port ? ` on private port ${handle.port}` : ''} (${handle.containerRef})${launch.replicas > 1 ? ` with ${launch.replicas} replicas` : ''}`,
      );
      await log(
        launch.replicas > 1
          ? 'Waiting for every replica to load its snapshot'
          : 'Waiting for the snapshot to load',
      );
      return handle.privateUrl;
    } catch (error) {
      if (run.signal.aborted) throw error;
      const reason =
        error instanceof InstanceStartError || error instanceof LaunchError
          ? error.message
          : 'The instance could not be started.';
      context.log.warn({ err: error, databaseId: run.database.id }, 'instance start failed');
      return failDeploy(run, deploymentId, buildId, reason, instance.id);
    }
  };
  const startStep = () => inSpan('deploy start', spanAttributes, startOnce);

  if (goal.phase !== 'deploy:retire') {
    // Whether this run started the process it waits for: one resumed in `deploy:wait` may find
    // it stopped (a graceful control-plane exit stops instances) and starts it once more.
    let startedHere = false;
    if (goal.phase === 'deploy:start' || !instance.private_url) {
      const started = await startStep();
      if (typeof started !== 'string') return started;
      startedHere = true;
    }
    const deadline = instance.created_at.getTime() + SNAPSHOT_LOAD_TIMEOUT_MS;
    while (true) {
      run.signal.throwIfAborted();
      // The switch waits for every replica: the endpoint spreads queries over all of them.
      const ready = await inSpan('deploy health check', spanAttributes, () =>
        everyReplicaReady(context.driver, instance.id),
      );
      if (ready) break;
      if (!(await context.driver.isAlive(instance.id))) {
        if (!startedHere) {
          startedHere = true;
          const restarted = await startStep();
          if (typeof restarted !== 'string') return restarted;
          continue;
        }
        const { lines } = await context.driver.readLogs(instance.id, undefined);
        const quoted = lines
          .slice(-QUOTED_LOG_LINES)
          .map((line) => withoutCredentials(line.message));
        return failDeploy(
          run,
          deploymentId,
          buildId,
          `The instance exited before its snapshot loaded.${quoted.length ? ` Last log lines:\n${quoted.join('\n')}` : ''}`,
          instance.id,
        );
      }
      if (Date.now() > deadline) {
        return failDeploy(
          run,
          deploymentId,
          buildId,
          `The instance did not load its snapshot within ${SNAPSHOT_LOAD_TIMEOUT_MS / 60_000} minutes.`,
          instance.id,
        );
      }
      await sleep(HEALTH_POLL_MS, undefined, { signal: run.signal }).catch(() => {});
    }
    await inSpan('deploy switch', spanAttributes, () => switchTo(run, instance.id));
  }
  const previousId = goalOf(run).previousInstanceId;
  if (previousId) {
    await log(`Stopping the previous instance ${previousId} once its queries in flight finish`);
    await context.driver.stop(previousId);
  }
  // Fewer replicas than before: the ones gone leave no slot holding WAL on the source.
  const previousReplicas = run.database.deployed_config?.replicas ?? 1;
  if (run.database.replicas < previousReplicas) {
    await dropReplicationState(context, run.owner, run.database, run.database.replicas);
  }
  const endpointUrl = endpoint.url;
  await log(`Instance is serving at ${endpointUrl}`);
  const database = run.database;
  const { action } = goal;
  await context.db.transaction().execute(async (tx) => {
    await tx
      .updateTable('deployments')
      .set({ status: 'succeeded', finished_at: new Date() })
      .where('id', '=', deploymentId)
      .execute();
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
    await recordAudit(tx, {
      accountId: database.account_id,
      databaseId: database.id,
      entityType: 'deployment',
      entityId: deploymentId,
      eventType: 'deploy.succeeded',
      payload: { buildId, instanceId: instance.id, action: goal.action },
    });
    await recordAudit(tx, {
      accountId: database.account_id,
      databaseId: database.id,
      entityType: 'database',
      entityId: database.id,
      eventType: isQueuedAction(action) ? FINISHED_EVENT[action] : `database.${action}`,
      payload: { buildId, deploymentId },
    });
    if (goal.action === 'provision' || goal.action === 'rebuild') {
      await context.events.emit(tx, {
        type: 'build.completed',
        accountId: database.account_id,
        databaseId: database.id,
        databaseName: database.name,
        fields: { endpointUrl },
        message: `${database.name} is built and running.`,
        severity: 'success',
      });
    }
  });
  return DONE;
}

/** Whether every replica of the instance answers `/health` with 200 (its snapshot is in). */
async function everyReplicaReady(driver: Driver, instanceId: string): Promise<boolean> {
  const replicas = await driver.replicas(instanceId);
  if (replicas.length === 0) return false;
  const statuses = await Promise.all(
    replicas.map((replica) =>
      replica.url === null
        ? 0
        : fetch(`${replica.url}/health`, {
            headers: withTraceHeaders({}),
            signal: AbortSignal.timeout(3000),
          }).then(
            (response) => response.status,
            () => 0,
          ),
    ),
  );
  return statuses.every((status) => status === 200);
}

/**
 * Opens the database's endpoint, on its recorded port (or a new one on its first deploy,
 * recorded then): its address for life.
 */
async function openEndpoint(run: GoalRun): Promise<Endpoint> {
  const database = run.database;
  const endpoint = await run.context.driver.openEndpoint(database.id, database.endpoint_port);
  if (database.endpoint_port !== endpoint.port || database.endpoint_url !== endpoint.url) {
    await updateClaimed(run, { endpoint_port: endpoint.port, endpoint_url: endpoint.url });
  }
  return endpoint;
}

/**
 * The switch: the endpoint sends new requests to the ready instance, and the store records it
 * as the serving one (the previous one, removed, is stopped next). Repeatable.
 */
async function switchTo(run: GoalRun, instanceId: string): Promise<void> {
  const { context } = run;
  await context.driver.route(run.database.id, instanceId);
  await context.db.transaction().execute(async (tx) => {
    const previousId = goalOf(run).previousInstanceId;
    if (previousId) await markRemoved(tx, previousId);
    await tx
      .updateTable('instances')
      .set({ standby: false, updated_at: new Date() })
      .where('id', '=', instanceId)
      .execute();
    await saveGoal(run, { ...goalOf(run), phase: 'deploy:retire' }, tx);
  });
  await appendDeploymentLog(
    context.db,
    goalOf(run).deploymentId as string,
    `The endpoint now sends queries to instance ${instanceId}`,
  );
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

/** A deploy that cannot even start (nothing to deploy): the goal ends with the database failed. */
async function failWithoutDeployment(run: GoalRun, reason: string): Promise<GoalOutcome> {
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
  return DONE;
}

/**
 * Stops what was started and ends the goal with the reason: the database stays `running` on
 * the instance that served before, or is `failed` when there is none.
 */
async function failDeploy(
  run: GoalRun,
  deploymentId: string,
  buildId: string,
  reason: string,
  instanceId?: string,
): Promise<GoalOutcome> {
  const { context } = run;
  const database = run.database;
  const action = goalOf(run).action;
  await appendDeploymentLog(context.db, deploymentId, `Deploy failed: ${reason}`);
  if (instanceId) {
    await context.driver.stop(instanceId);
    await markRemoved(context.db, instanceId);
  }
  // The instance that served before the deploy keeps serving: the database stays usable.
  const serving = await liveInstanceOf(context.db, database.id);
  const stillServing = serving !== undefined && (await context.driver.isAlive(serving.id));
  if (!stillServing) await context.driver.unroute(database.id, unroutedMessage('failed'));
  // The deployment log keeps the instance's words; the database gets the user's.
  reason = await deployFailureReason(context, database, reason);
  await context.db.transaction().execute(async (tx) => {
    await tx
      .updateTable('deployments')
      .set({ status: 'failed', finished_at: new Date() })
      .where('id', '=', deploymentId)
      .execute();
    // A resize that did not happen leaves the size and replicas the serving instance runs at.
    const served = stillServing ? database.deployed_config : null;
    const undoResize =
      action === 'resize' && served
        ? { instance_size: served.instanceSize, replicas: served.replicas ?? 1 }
        : {};
    await updateClaimed(
      run,
      finishedGoal({
        status: stillServing ? 'running' : 'failed',
        last_error: reason,
        ...undoResize,
      }),
      tx,
    );
    await recordAudit(tx, {
      accountId: database.account_id,
      databaseId: database.id,
      entityType: 'deployment',
      entityId: deploymentId,
      eventType: 'deploy.failed',
      payload: { buildId, reason, action },
    });
    await notifyDeployFailed(tx, database, reason);
  });
  return DONE;
}
