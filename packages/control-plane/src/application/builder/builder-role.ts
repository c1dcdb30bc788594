import { performance } from 'node:perf_hooks';
import { setTimeout as sleep } from 'node:timers/promises';
import {
  BUILD_LEASE_MS,
  claimBuild,
  expireDeadLocalBuildLeases,
  failLostBuilds,
} from '../../adapters/store/build-queue.ts';
import { buildStatusOf } from '../../adapters/store/build-store.ts';
import { computeTypeFor } from '../../domain/build-rates.ts';
import type { LoopPulse } from '../../roles/loop-pulse.ts';
import type { RoleContext, RunningRole } from '../../roles/role.ts';
import type { BuildRunner } from './build-runner.ts';
import type { SourceIntrospector } from './run-build.ts';
import { runClaimedBuild } from './run-claimed-build.ts';

export interface BuilderOptions {
  readonly introspect: SourceIntrospector;
  /** Where claimed builds run; in this process unless given (the Kubernetes driver: Jobs). */
  readonly runner?: BuildRunner;
  /** How long an idle builder waits before looking for work again. */
  readonly pollMs?: number;
  readonly leaseMs?: number;
  /** Told of each pass and, during a build, of each renewed lease (the process's probes). */
  readonly pulse?: LoopPulse;
}

/** Runs claimed builds in the builder's own process. */
export function localBuildRunner(
  context: RoleContext,
  options: Pick<BuilderOptions, 'introspect' | 'leaseMs'>,
): BuildRunner {
  const computeType = computeTypeFor(context.driver.name);
  return {
    async run(claim, stopping, progressed) {
      const started = performance.now();
      const result = await runClaimedBuild(claim, {
        db: context.db,
        log: context.log,
        dataDir: context.config.dataDir,
        bundleCacheDir: context.config.bundleCacheDir,
        secrets: context.secrets,
        introspect: options.introspect,
        computeType,
        ...(options.leaseMs ? { leaseMs: options.leaseMs } : {}),
        stopping,
        ...(progressed ? { onLeaseRenewed: progressed } : {}),
      });
      context.metrics?.recordBuild(result, (performance.now() - started) / 1000);
    },
  };
}

/**
 * A runner whose builds end elsewhere (Kubernetes Jobs), with their outcomes counted in this
 * process's metrics as the store has them once `run` returns: the Job records the build, the
 * builder only watches it. A builder that stops while the Job goes on counts nothing.
 */
function measuredRunner(context: RoleContext, runner: BuildRunner): BuildRunner {
  return {
    async run(claim, stopping, progressed) {
      const started = performance.now();
      await runner.run(claim, stopping, progressed);
      if (stopping.aborted || !context.metrics) return;
      const status = (await buildStatusOf(context.db, claim.build.id))?.status;
      const outcome =
        status === 'succeeded' || status === 'failed'
          ? status
          : status === 'queued'
            ? 'released'
            : undefined;
      if (outcome) context.metrics.recordBuild(outcome, (performance.now() - started) / 1000);
    },
  };
}

/**
 * The builder role: a worker that claims one build at a time (queued, or lost by another
 * builder) and runs it through its runner, which records the outcome. It emits no platform
 * events: the reconciler reports build.completed / build.failed when it sees the result.
 * Closing it puts a build running in this process back in the queue without counting the
 * attempt (a build running in a Job goes on there).
 */
export async function startBuilder(
  context: RoleContext,
  options: BuilderOptions,
): Promise<RunningRole> {
  const { db, log } = context;
  const owner = `${context.processId}:builder`;
  const pollMs = options.pollMs ?? 500;
  const leaseMs = options.leaseMs ?? BUILD_LEASE_MS;
  const runner = options.runner
    ? measuredRunner(context, options.runner)
    : localBuildRunner(context, options);
  const stopping = new AbortController();

  const loop = (async () => {
    while (!stopping.signal.aborted) {
      try {
        await expireDeadLocalBuildLeases(db);
        await failLostBuilds(db);
        const claim = await claimBuild(db, owner, leaseMs);
        options.pulse?.passed();
        if (claim) {
          log.info({ buildId: claim.build.id, attempt: claim.attempt }, 'build claimed');
          // A long build is progress while its lease holds.
          await runner.run(claim, stopping.signal, () => options.pulse?.passed());
          continue;
        }
      } catch (error) {
        if (stopping.signal.aborted) break;
        options.pulse?.failed();
        log.error({ err: error }, 'builder loop failed; retrying');
      }
      await sleep(pollMs, undefined, { signal: stopping.signal }).catch(() => {});
    }
  })();

  return {
    async close() {
      stopping.abort();
      await loop;
    },
  };
}
