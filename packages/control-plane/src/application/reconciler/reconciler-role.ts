import { setTimeout as sleep } from 'node:timers/promises';
import { inSpan } from '@replix/runtime/tracing';
import type { DatabaseRow } from '../../adapters/store/database-store.ts';
import { databaseById } from '../../adapters/store/database-store.ts';
import {
  claimGoal,
  freeDeadLocalLeases,
  GOAL_RETRY,
  LEASE_RENEW_MS,
  releaseLease,
  renewLease,
} from '../../adapters/store/goal-store.ts';
import { unremovedInstances } from '../../adapters/store/instance-store.ts';
import type { LoopPulse } from '../../roles/loop-pulse.ts';
import type { RoleContext, RunningRole } from '../../roles/role.ts';
import { advanceGoal } from './advance-goal.ts';
import { dropDueReplicationState } from './drop-replication-state.ts';
import { type GoalRun, LeaseLostError, systemPorts } from './goal-run.ts';
import { instanceLaunchFor } from './instance-launch-for.ts';
import { Maintenance } from './maintenance.ts';
import { restoreEndpoints } from './restore-endpoints.ts';

/** Goals one reconciler process works on at once. */
const MAX_CONCURRENT_GOALS = 8;
/** How often leases of dead local processes are looked for. */
const DEAD_LEASE_CHECK_MS = 2000;

class Stopping extends Error {}

/**
 * The reconciler role: makes the real world match the store. On start it keeps the instances
 * that still run (adopting them), stops the ones the store does not know, and opens every
 * database's endpoint on its own port again; then, every
 * `reconcileIntervalMs`, it claims databases with a goal and drives each goal forward
 * (several at once, each under a renewed lease), and runs the maintenance pass (key sync,
 * restarts of dead instances), and retries the drops of sources' replication state that are
 * due. Each tick reports to `pulse` (the process's probes).
 */
export async function startReconciler(
  context: RoleContext,
  pulse?: LoopPulse,
): Promise<RunningRole> {
  const { db, driver, log } = context;
  const owner = `${context.processId}:reconciler`;
  const stopping = new AbortController();
  const running = new Map<string, Promise<void>>();
  const maintenance = new Maintenance(context, owner);

  await adoptAndReap(context);
  await restoreEndpoints(context);

  const runGoal = async (database: DatabaseRow) => {
    const abort = new AbortController();
    const onStop = () => abort.abort(new Stopping());
    stopping.signal.addEventListener('abort', onStop);
    const renewal = setInterval(() => {
      renewLease(db, owner, database.id).then(
        (held) => {
          if (!held) abort.abort(new LeaseLostError());
        },
        (error: unknown) =>
          log.warn({ err: error, databaseId: database.id }, 'lease renewal failed'),
      );
    }, LEASE_RENEW_MS);
    const run: GoalRun = { context, ports: systemPorts, owner, signal: abort.signal, database };
    const goal = database.goal;
    try {
      // Each pass is a span of the trace of the request that queued the goal (its stored
      // traceparent), however much later it runs: one trace from the request to the deploy.
      const outcome = await inSpan(
        `reconcile ${goal?.action}`,
        {
          'replix.database.id': database.id,
          'replix.goal.action': goal?.action ?? '',
          'replix.goal.phase': (goal && 'phase' in goal && goal.phase) || 'start',
        },
        async (span) => {
          const outcome = await advanceGoal(run);
          span?.setAttribute('replix.goal.outcome', outcome.kind);
          return outcome;
        },
        { parent: goal?.traceparent },
      );
      if (outcome.kind === 'wait') await releaseLease(db, owner, database.id, outcome.retryAfterMs);
      // A finished goal's last write left the database's status: `failed`, or where it went.
      else if (goal)
        context.metrics?.recordGoal(
          goal,
          run.database.status === 'failed' ? 'failed' : 'succeeded',
        );
    } catch (error) {
      if (abort.signal.reason instanceof LeaseLostError || error instanceof LeaseLostError) {
        log.warn(
          { databaseId: database.id },
          'lost the lease on a goal; another reconciler has it',
        );
      } else if (abort.signal.reason instanceof Stopping) {
        // The phase is recorded: the next reconciler resumes from it.
        await releaseLease(db, owner, database.id).catch(() => {});
      } else {
        log.error(
          { err: error, databaseId: database.id, goal: run.database.goal },
          'goal step failed; retrying',
        );
        await releaseLease(db, owner, database.id, GOAL_RETRY.delayMs(1)).catch(() => {});
      }
    } finally {
      clearInterval(renewal);
      stopping.signal.removeEventListener('abort', onStop);
    }
  };

  let lastDeadLeaseCheck = 0;
  const tick = async () => {
    if (Date.now() - lastDeadLeaseCheck > DEAD_LEASE_CHECK_MS) {
      lastDeadLeaseCheck = Date.now();
      const freed = await freeDeadLocalLeases(db);
      if (freed > 0) log.info({ freed }, 'took over leases of a control plane that died');
    }
    while (running.size < MAX_CONCURRENT_GOALS && !stopping.signal.aborted) {
      const database = await claimGoal(db, owner);
      if (!database) break;
      const work = runGoal(database).finally(() => running.delete(database.id));
      running.set(database.id, work);
    }
    if (!stopping.signal.aborted) await maintenance.pass();
    if (!stopping.signal.aborted) await dropDueReplicationState(context, owner);
  };

  const loop = (async () => {
    while (!stopping.signal.aborted) {
      try {
        await tick();
        pulse?.passed();
      } catch (error) {
        pulse?.failed();
        log.error({ err: error }, 'reconciler tick failed');
      }
      await sleep(context.config.reconcileIntervalMs, undefined, {
        signal: stopping.signal,
      }).catch(() => {});
    }
  })();

  return {
    async close() {
      stopping.abort();
      await loop;
      await Promise.allSettled(running.values());
      await maintenance.settle();
    },
  };

  /** Start-up: adopt the live instances whose process still runs, stop the unknown ones. */
  async function adoptAndReap(ctx: RoleContext): Promise<void> {
    const liveRows = () => unremovedInstances(ctx.db);
    if (driver.reapOrphans) {
      const reaped = await driver.reapOrphans(async () => (await liveRows()).map((row) => row.id));
      if (reaped.length > 0) log.warn({ instanceIds: reaped }, 'stopped orphaned instances');
    }
    for (const instance of await liveRows()) {
      if (!instance.build_id || !(await driver.isAlive(instance.id))) continue;
      try {
        const database = await databaseById(ctx.db, instance.database_id);
        if (!database) throw new Error(`Database ${instance.database_id} is not in the store.`);
        const { launch } = await instanceLaunchFor(ctx, database, instance, instance.build_id);
        await driver.start(launch);
      } catch (error) {
        log.warn({ err: error, instanceId: instance.id }, 'could not adopt a running instance');
      }
    }
  }
}
