import { setTimeout as sleep } from 'node:timers/promises';
import type { LoopPulse } from '../roles/loop-pulse.ts';
import type { RoleContext, RunningRole } from '../roles/role.ts';
import { buildFailureMessage } from './build-failure-message.ts';
import { appendBuildLog } from './build-log.ts';
import {
  BUILD_LEASE_MS,
  type BuildClaim,
  claimBuild,
  expireDeadLocalBuildLeases,
  failLostBuilds,
  finishBuild,
  releaseBuild,
  renewBuildLease,
} from './build-queue.ts';
import { buildCostCents, computeTypeFor } from './rates.ts';
import { runBuild, type SourceIntrospector } from './run-build.ts';

export interface BuilderOptions {
  readonly introspect: SourceIntrospector;
  /** How long an idle builder waits before looking for work again. */
  readonly pollMs?: number;
  readonly leaseMs?: number;
  /** Told of each pass and, during a build, of each renewed lease (the process's probes). */
  readonly pulse?: LoopPulse;
}

class LeaseLost extends Error {}
class Stopping extends Error {}

/**
 * The builder role: a worker that claims one build at a time (queued, or lost by another
 * builder), keeps its lease fresh while it runs, runs it and records the outcome. It emits no
 * platform events: the reconciler reports build.completed / build.failed when it sees the
 * result. Closing it puts a build in progress back in the queue without counting the attempt.
 */
export async function startBuilder(
  context: RoleContext,
  options: BuilderOptions,
): Promise<RunningRole> {
  const { db, log } = context;
  const owner = `${context.processId}:builder`;
  const pollMs = options.pollMs ?? 500;
  const leaseMs = options.leaseMs ?? BUILD_LEASE_MS;
  const computeType = computeTypeFor(context.driver.name);
  const stopping = new AbortController();

  const execute = async (claim: BuildClaim) => {
    const { build, attempt } = claim;
    const started = performance.now();
    const attemptAbort = new AbortController();
    const onStop = () => attemptAbort.abort(new Stopping());
    stopping.signal.addEventListener('abort', onStop);
    const renewal = setInterval(() => {
      renewBuildLease(db, claim, leaseMs).then(
        (held) => {
          // A long build is progress while its lease holds.
          if (held) options.pulse?.passed();
          else attemptAbort.abort(new LeaseLost());
        },
        (error: unknown) =>
          log.warn({ err: error, buildId: build.id }, 'build lease renewal failed'),
      );
    }, leaseMs / 3);
    const finish = (status: 'succeeded' | 'failed', rest: object) => {
      const elapsedMs = performance.now() - started;
      return finishBuild(db, claim, {
        status,
        finishedAt: new Date((build.started_at ?? new Date()).getTime() + elapsedMs),
        durationSeconds: Math.round(elapsedMs / 1000),
        computeType,
        costEstimateCents: buildCostCents(computeType, elapsedMs),
        ...rest,
      });
    };
    try {
      await appendBuildLog(
        db,
        build.id,
        `Build started (attempt ${attempt}, ${build.builder_job_id})`,
      );
      const artifact = await runBuild(build, {
        db,
        dataDir: context.config.dataDir,
        secrets: context.secrets,
        introspect: options.introspect,
        signal: attemptAbort.signal,
      });
      attemptAbort.signal.throwIfAborted();
      const recorded = await finish('succeeded', {
        imageUri: artifact.imageUri,
        artifactHash: artifact.buildHash,
        configHash: artifact.configHash,
      });
      if (recorded) await appendBuildLog(db, build.id, 'Build succeeded');
      else log.warn({ buildId: build.id }, 'build finished after its lease was taken over');
    } catch (error) {
      const reason = attemptAbort.signal.reason;
      if (reason instanceof Stopping) {
        await releaseBuild(db, claim);
        await appendBuildLog(db, build.id, 'Builder stopping; the build goes back to the queue');
        return;
      }
      if (reason instanceof LeaseLost) {
        log.warn({ buildId: build.id }, 'build lease lost; another builder takes it over');
        return;
      }
      const { message, expected } = buildFailureMessage(error);
      if (!expected) log.error({ err: error, buildId: build.id }, 'build failed unexpectedly');
      await appendBuildLog(db, build.id, `Build failed: ${message}`);
      await finish('failed', { error: message });
    } finally {
      clearInterval(renewal);
      stopping.signal.removeEventListener('abort', onStop);
    }
  };

  const loop = (async () => {
    while (!stopping.signal.aborted) {
      try {
        await expireDeadLocalBuildLeases(db);
        await failLostBuilds(db);
        const claim = await claimBuild(db, owner, leaseMs);
        options.pulse?.passed();
        if (claim) {
          log.info({ buildId: claim.build.id, attempt: claim.attempt }, 'build claimed');
          await execute(claim);
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
