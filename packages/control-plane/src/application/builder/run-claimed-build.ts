import { performance } from 'node:perf_hooks';
import { inSpan, tracingActive } from '@replix/runtime/tracing';
import type { Logger } from 'pino';
import {
  BUILD_LEASE_MS,
  type BuildClaim,
  finishBuild,
  releaseBuild,
  renewBuildLease,
} from '../../adapters/store/build-queue.ts';
import { appendLogLine } from '../../adapters/store/log-lines.ts';
import type { StoreDb } from '../../adapters/store/open-store.ts';
import type { SecretBox } from '../../adapters/store/secret-box.ts';
import { type BuildComputeType, buildCostCents } from '../../domain/build-rates.ts';
import { buildFailureMessage } from './build-failure-message.ts';
import { buildTraceparent } from './build-traceparent.ts';
import { runBuild, type SourceIntrospector } from './run-build.ts';

export interface ClaimedBuildOptions {
  readonly db: StoreDb;
  readonly log: Logger;
  readonly dataDir: string;
  /** Where bundled instance programs are kept (REPLIX_BUNDLE_CACHE_DIR); undefined: the data folder's. */
  readonly bundleCacheDir?: string | undefined;
  readonly secrets: SecretBox;
  readonly introspect: SourceIntrospector;
  /** The tier the build is billed at (rates.ts). */
  readonly computeType: BuildComputeType;
  readonly leaseMs?: number;
  /** Aborted when this process stops: the build goes back to the queue, its attempt not counted. */
  readonly stopping: AbortSignal;
  /** Told each time the lease is renewed. */
  readonly onLeaseRenewed?: () => void;
}

/**
 * How a claimed build ended here: recorded as succeeded or failed, given back to the queue
 * (this process stopped), or lost (its lease was taken over; nothing recorded).
 */
export type ClaimedBuildResult = 'succeeded' | 'failed' | 'released' | 'lost';

class LeaseLost extends Error {}
class Stopping extends Error {}

/**
 * Runs one claimed build to its end and records it: keeps the claim's lease fresh, runs the
 * build (run-build.ts), writes the outcome with its duration and cost, and the build log's
 * first and last lines. The builder role runs every build through this, in its own process or,
 * with the Kubernetes driver, in a Job's `replix build-job`. With tracing on, the build is a
 * span `build` in the trace of the request whose goal queued it (docs/tracing.md).
 */
export async function runClaimedBuild(
  claim: BuildClaim,
  options: ClaimedBuildOptions,
): Promise<ClaimedBuildResult> {
  const { build } = claim;
  const parent = tracingActive() ? await buildTraceparent(options.db, build) : undefined;
  return inSpan(
    'build',
    {
      'replix.build.id': build.id,
      'replix.database.id': build.database_id,
      'replix.build.attempt': claim.attempt,
    },
    async (span) => {
      const result = await runClaimedAttempt(claim, options);
      span?.setAttribute('replix.build.outcome', result);
      return result;
    },
    parent ? { parent } : {},
  );
}

async function runClaimedAttempt(
  claim: BuildClaim,
  options: ClaimedBuildOptions,
): Promise<ClaimedBuildResult> {
  const { db, log } = options;
  const { build, attempt } = claim;
  const leaseMs = options.leaseMs ?? BUILD_LEASE_MS;
  const started = performance.now();
  const attemptAbort = new AbortController();
  const onStop = () => attemptAbort.abort(new Stopping());
  if (options.stopping.aborted) onStop();
  options.stopping.addEventListener('abort', onStop);
  const renewal = setInterval(() => {
    renewBuildLease(db, claim, leaseMs).then(
      (held) => {
        if (held) options.onLeaseRenewed?.();
        else attemptAbort.abort(new LeaseLost());
      },
      (error: unknown) => log.warn({ err: error, buildId: build.id }, 'build lease renewal failed'),
    );
  }, leaseMs / 3);
  const finish = (status: 'succeeded' | 'failed', rest: object) => {
    const elapsedMs = performance.now() - started;
    return finishBuild(db, claim, {
      status,
      finishedAt: new Date((build.started_at ?? new Date()).getTime() + elapsedMs),
      durationSeconds: Math.round(elapsedMs / 1000),
      computeType: options.computeType,
      costEstimateCents: buildCostCents(options.computeType, elapsedMs),
      ...rest,
    });
  };
  try {
    await appendLogLine(
      db,
      build.id,
      `Build started (attempt ${attempt}, ${build.builder_job_id})`,
    );
    const artifact = await runBuild(build, {
      db,
      dataDir: options.dataDir,
      bundleCacheDir: options.bundleCacheDir,
      secrets: options.secrets,
      introspect: options.introspect,
      signal: attemptAbort.signal,
    });
    attemptAbort.signal.throwIfAborted();
    const recorded = await finish('succeeded', {
      imageUri: artifact.imageUri,
      artifactHash: artifact.buildHash,
      configHash: artifact.configHash,
    });
    if (!recorded) {
      log.warn({ buildId: build.id }, 'build finished after its lease was taken over');
      return 'lost';
    }
    await appendLogLine(db, build.id, 'Build succeeded');
    return 'succeeded';
  } catch (error) {
    const reason = attemptAbort.signal.reason;
    if (reason instanceof Stopping) {
      await releaseBuild(db, claim);
      await appendLogLine(db, build.id, 'Builder stopping; the build goes back to the queue');
      return 'released';
    }
    if (reason instanceof LeaseLost) {
      log.warn({ buildId: build.id }, 'build lease lost; another builder takes it over');
      return 'lost';
    }
    const { message, expected } = buildFailureMessage(error);
    if (!expected) log.error({ err: error, buildId: build.id }, 'build failed unexpectedly');
    await appendLogLine(db, build.id, `Build failed: ${message}`);
    return (await finish('failed', { error: message })) ? 'failed' : 'lost';
  } finally {
    clearInterval(renewal);
    options.stopping.removeEventListener('abort', onStop);
  }
}
