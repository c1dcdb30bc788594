import { randomUUID } from 'node:crypto';
import { newKeyId } from '@replix/instance-protocol';
import { inSpan } from '@replix/runtime/tracing';
import type { Endpoint } from '../../adapters/drivers/driver.ts';
import { InstanceStartError } from '../../adapters/drivers/instance-start-error.ts';
import { currentReplicaUrls } from '../../adapters/drivers/replica-urls.ts';
import {
  insertInstance,
  liveInstanceById,
  liveInstanceOf,
  liveInstancesOf,
  markRemoved,
  markServing,
  recordStarted,
} from '../../adapters/store/instance-store.ts';
import { appendLogLine } from '../../adapters/store/log-lines.ts';
import { recordReplicationSource } from '../../adapters/store/replication-sources.ts';
import {
  type DeployEffect,
  type DeployFacts,
  type DeployPlan,
  type DeployStep,
  nextTransition,
  resumeAt,
  SNAPSHOT_LOAD_TIMEOUT_MS,
} from '../../domain/deploy-steps.ts';
import { unroutedMessage } from '../../domain/endpoint-messages.ts';
import { type DeployProgress, deployProgressOf } from '../../domain/goal.ts';
import { deployFailureReason } from './deploy-failure-reason.ts';
import {
  failDeployment,
  failWithoutDeployment,
  recordDeployment,
  succeedDeployment,
} from './deployment-outcomes.ts';
import { dropReplicationState } from './drop-replication-state.ts';
import {
  DONE,
  deployGoalOf,
  type GoalOutcome,
  type GoalRun,
  saveDeployProgress,
  updateClaimed,
} from './goal-run.ts';
import { instanceLaunchFor, LaunchError } from './instance-launch-for.ts';

export { SNAPSHOT_LOAD_TIMEOUT_MS };

/** A deploy being interpreted: its goal run, its plan and the database's endpoint. */
interface DeployRun {
  readonly run: GoalRun;
  readonly plan: DeployPlan;
  endpoint?: Endpoint;
  /** Each waited-for instance's load deadline, read once (the wait polls 4 times a second). */
  readonly loadDeadlines: Map<string, number>;
}

/**
 * Deploys `buildId` as the database's instance without dropping a query: the steps of
 * `domain/deploy-steps.ts`, from the phase the goal recorded (a successor resumes there), each
 * observed, decided and applied in turn. The endpoint (its URL) is the database's for life.
 * When the new instance fails, the previous one keeps serving (the database stays `running`,
 * the deployment is `failed` with the reason); with none, the database is `failed`.
 */
export async function deploy(
  run: GoalRun,
  buildId: string | null | undefined,
): Promise<GoalOutcome> {
  if (!buildId) {
    await failWithoutDeployment(run, 'There is no succeeded build to deploy: use Rebuild instead.');
    return DONE;
  }
  const progress =
    deployProgressOf(deployGoalOf(run)) ?? (await recordDeployment(run, buildId, randomUUID()));
  const plan = { deploymentId: progress.deploymentId, buildId };
  const deployRun: DeployRun = { run, plan, loadDeadlines: new Map() };
  const instance =
    progress.phase === 'deploy:prepare'
      ? undefined
      : await liveInstanceById(run.context.db, progress.instanceId);
  let transition = resumeAt(progress, instance && { started: instance.private_url !== null });
  while (true) {
    for (const effect of transition.effects) await apply(deployRun, effect);
    const step = transition.next;
    if (!step) return DONE;
    run.signal.throwIfAborted();
    transition = nextTransition(deployRun.plan, step, await observe(deployRun, step));
  }
}

/** What `step` decides on, read from the store, the driver and the clock. */
async function observe(
  deployRun: DeployRun,
  step: DeployStep,
): Promise<DeployFacts[DeployStep['name']]> {
  const { context } = deployRun.run;
  const database = deployRun.run.database;
  switch (step.name) {
    case 'prepare': {
      const live = await liveInstancesOf(context.db, database.id);
      return {
        servingInstanceId: live.find((instance) => !instance.standby)?.id,
        standbyIds: live.filter((instance) => instance.standby).map((instance) => instance.id),
        newInstanceId: randomUUID(),
      };
    }
    case 'start':
      return inSpan('deploy start', spanAttributes(deployRun, step.instanceId), () =>
        startInstance(deployRun, step.instanceId),
      );
    case 'wait':
      return waitFacts(deployRun, step.instanceId);
    case 'retire':
      return {
        replicasBefore: database.deployed_config?.replicas ?? 1,
        replicasAfter: database.replicas,
        endpointUrl: (deployRun.endpoint as Endpoint).url,
      };
    case 'failed':
      return failedFacts(deployRun, step.reason);
    default:
      return {};
  }
}

function spanAttributes(deployRun: DeployRun, instanceId: string) {
  return {
    'replix.deployment.id': deployRun.plan.deploymentId,
    'replix.instance.id': instanceId,
  };
}

/** Starts (or adopts) the instance: where it is reached, or why it could not start. */
async function startInstance(
  { run, plan }: DeployRun,
  instanceId: string,
): Promise<DeployFacts['start']> {
  const { context } = run;
  try {
    const instance = await liveInstanceById(context.db, instanceId);
    if (!instance) return { started: false, reason: 'The new instance record is missing.' };
    const { launch, keysVersion, source } = await instanceLaunchFor(
      context,
      run.database,
      instance,
      plan.buildId,
    );
    await recordReplicationSource(context.db, run.database, source, launch.replicas);
    const handle = await context.driver.start(launch);
    const replicaUrls = await currentReplicaUrls(context.driver, instanceId);
    const { privateUrl, port, pid, containerRef } = handle;
    const addresses = { privateUrl, port, pid, containerRef, replicaUrls, keysVersion };
    return { started: true, instance: { ...addresses, replicas: launch.replicas } };
  } catch (error) {
    if (run.signal.aborted) throw error;
    context.log.warn({ err: error, databaseId: run.database.id }, 'instance start failed');
    const known = error instanceof InstanceStartError || error instanceof LaunchError;
    return { started: false, reason: known ? error.message : 'The instance could not be started.' };
  }
}

/** Whether every replica is ready; if not, whether the instance still runs, and the time. */
async function waitFacts(deployRun: DeployRun, instanceId: string): Promise<DeployFacts['wait']> {
  const { context, ports } = deployRun.run;
  // The switch waits for every replica: the endpoint spreads queries over all of them.
  const ready = await inSpan(
    'deploy health check',
    spanAttributes(deployRun, instanceId),
    async () => {
      const replicas = await context.driver.replicas(instanceId);
      const statuses = await Promise.all(
        replicas.map((replica) => (replica.url === null ? 0 : ports.healthStatusOf(replica.url))),
      );
      return replicas.length > 0 && statuses.every((status) => status === 200);
    },
  );
  if (ready) return { ready: true };
  if (!(await context.driver.isAlive(instanceId))) {
    const { lines } = await context.driver.readLogs(instanceId, undefined);
    return { ready: false, alive: false, lastLogLines: lines.map((line) => line.message) };
  }
  return { ready: false, alive: true, now: ports.clock.now(), deadline: await loadDeadline() };

  /** When the instance's load times out: from its creation, so a restart gets no more time. */
  async function loadDeadline(): Promise<number> {
    let deadline = deployRun.loadDeadlines.get(instanceId);
    if (deadline === undefined) {
      const instance = await liveInstanceById(context.db, instanceId);
      deadline = (instance?.created_at.getTime() ?? 0) + SNAPSHOT_LOAD_TIMEOUT_MS;
      deployRun.loadDeadlines.set(instanceId, deadline);
    }
    return deadline;
  }
}

/** After a failure: whether the instance that served before still does, and the user's reason. */
async function failedFacts({ run }: DeployRun, reason: string): Promise<DeployFacts['failed']> {
  const { context } = run;
  const serving = await liveInstanceOf(context.db, run.database.id);
  const stillServing = serving !== undefined && (await context.driver.isAlive(serving.id));
  // The deployment log keeps the instance's words; the database gets the user's.
  const userReason = await deployFailureReason(context, run.database, reason);
  return { stillServing, userReason };
}

/** Applies one effect through the driver, the store or the clock. */
async function apply(deployRun: DeployRun, effect: DeployEffect): Promise<void> {
  const { run, plan } = deployRun;
  const { context } = run;
  switch (effect.kind) {
    case 'log':
      return appendLogLine(context.db, plan.deploymentId, effect.message);
    case 'openEndpoint':
      deployRun.endpoint = await openEndpoint(run);
      return;
    case 'removeInstance':
      await context.driver.stop(effect.instanceId);
      return markRemoved(context.db, effect.instanceId);
    case 'recordInstance':
      return recordInstance(deployRun, effect.progress, effect.standby);
    case 'recordStarted':
      return context.db.transaction().execute(async (tx) => {
        await recordStarted(tx, effect.progress.instanceId, effect.instance);
        await saveDeployProgress(run, effect.progress, tx);
      });
    case 'sleep':
      return run.ports.clock.sleep(effect.ms, run.signal);
    case 'route':
      return inSpan('deploy switch', spanAttributes(deployRun, effect.instanceId), () =>
        context.driver.route(run.database.id, effect.instanceId),
      );
    case 'recordSwitch':
      return context.db.transaction().execute(async (tx) => {
        const { instanceId, previousInstanceId } = effect.progress;
        if (previousInstanceId) await markRemoved(tx, previousInstanceId);
        await markServing(tx, instanceId);
        await saveDeployProgress(run, effect.progress, tx);
      });
    case 'stopInstance':
      return context.driver.stop(effect.instanceId);
    case 'dropReplicationState':
      return dropReplicationState(context, run.owner, run.database, effect.fromOrdinal);
    case 'unroute':
      return context.driver.unroute(run.database.id, unroutedMessage('failed'));
    case 'succeed':
      return succeedDeployment(run, plan, effect.instanceId, (deployRun.endpoint as Endpoint).url);
    case 'failDeployment':
      return failDeployment(run, plan, effect.reason, effect.stillServing);
  }
}

/** Records the new instance (a standby beside a serving one) and the `deploy:start` phase. */
function recordInstance(
  { run, plan, endpoint }: DeployRun,
  progress: DeployProgress & { phase: 'deploy:start' },
  standby: boolean,
): Promise<void> {
  const { context } = run;
  return context.db.transaction().execute(async (tx) => {
    await insertInstance(tx, {
      id: progress.instanceId,
      database_id: run.database.id,
      build_id: plan.buildId,
      driver: context.driver.name,
      control_key_id: newKeyId(),
      endpoint_url: (endpoint as Endpoint).url,
      standby,
    });
    await saveDeployProgress(run, progress, tx);
  });
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
