import { randomBytes } from 'node:crypto';
import { setTimeout as sleep } from 'node:timers/promises';
import type { Logger } from 'pino';
import type { BuildRunner } from '../../../application/builder/build-runner.ts';
import { buildCostCents } from '../../../domain/build-rates.ts';
import {
  BUILD_LEASE_MS,
  type BuildClaim,
  finishBuild,
  renewBuildLease,
} from '../../store/build-queue.ts';
import { appendLogLine } from '../../store/log-lines.ts';
import type { StoreDb } from '../../store/open-store.ts';
import { type BuildCredential, buildCredentialSecret } from './build-credential.ts';
import { type BuildJobOptions, buildJobManifest } from './build-job-manifest.ts';
import type { KubernetesApi, LiveObject } from './kubernetes-api.ts';
import { LABELS, labelValue } from './kubernetes-names.ts';
import { PollPauses } from './poll-pauses.ts';

export interface KubernetesBuildRunnerOptions {
  readonly api: KubernetesApi;
  readonly db: StoreDb;
  readonly log: Logger;
  readonly job: BuildJobOptions;
  /**
   * The build's source credential (the builder opens it with the secret key), or a reason the
   * build cannot run, fit for its user (the database or its connection is gone).
   */
  readonly credentialOf: (build: BuildClaim['build']) => Promise<BuildCredential | string>;
  readonly leaseMs?: number;
}

const FIRST_POLL_MS = 200;
const MAX_POLL_MS = 2000;
const COMPUTE_TYPE = 'kubernetes.job';

interface JobCondition {
  type?: string;
  status?: string;
  reason?: string;
}

/**
 * Why a Job ended, in the user's words, or null while it runs. A Job that ended before its
 * process recorded an outcome is the only case these words reach a build: the pod never ran
 * (no image, no volume), it ran out of time, or it was killed.
 */
export function jobEndReason(job: LiveObject | null, deadlineSeconds: number): string | null {
  if (!job) return 'The build job was deleted before it recorded an outcome.';
  const conditions = ((job.status ?? {}) as { conditions?: JobCondition[] }).conditions ?? [];
  const ended = (type: string) => conditions.find((c) => c.type === type && c.status === 'True');
  const failed = ended('Failed');
  if (failed?.reason === 'DeadlineExceeded') {
    return `The build did not finish within ${deadlineSeconds} s (the build job's deadline).`;
  }
  if (failed) {
    return `The build job failed${failed.reason ? ` (${failed.reason})` : ''} before it recorded an outcome.`;
  }
  if (ended('Complete')) return 'The build job ended without recording an outcome.';
  return null;
}

/**
 * Runs each claimed build as a Kubernetes Job (`replix build-job` under the builder's claim,
 * build-job-manifest.ts) and watches it: the Job's process records the log and the outcome
 * through the same code the builder runs in process (runClaimedBuild). The builder keeps the
 * claim's lease fresh while the Job runs, and fails the build itself only when the Job ended
 * without recording (the pod never ran, the deadline passed). A builder that stops leaves the
 * Job running: its process holds the lease and records the outcome.
 *
 * Each Job gets its build's source credential in a Secret of its own (build-credential.ts),
 * applied once the Job has a uid to own it (the pod waits for it), deleted when the build
 * ends here, and in any case with the Job.
 */
export class KubernetesBuildRunner implements BuildRunner {
  readonly #options: KubernetesBuildRunnerOptions;

  constructor(options: KubernetesBuildRunnerOptions) {
    this.#options = options;
  }

  async run(claim: BuildClaim, stopping: AbortSignal, progressed?: () => void): Promise<void> {
    const { api, db, log, job: jobOptions } = this.#options;
    const leaseMs = this.#options.leaseMs ?? BUILD_LEASE_MS;
    const { build, attempt } = claim;
    const credential = await this.#options.credentialOf(build);
    if (typeof credential === 'string') {
      await this.#failUnrecorded(claim, credential);
      return;
    }
    const manifest = buildJobManifest(
      {
        buildId: build.id,
        attempt,
        launchId: randomBytes(3).toString('hex'),
        databaseId: build.database_id,
        accountId: build.account_id,
      },
      jobOptions,
    );
    const ref = {
      apiVersion: manifest.apiVersion,
      kind: manifest.kind,
      namespace: manifest.metadata.namespace,
      name: manifest.metadata.name,
    };
    await this.#removeEarlierJobs(build.id, ref.name);
    const job = await api.apply(manifest);
    const secret = buildCredentialSecret(
      {
        name: ref.name,
        namespace: ref.namespace,
        uid: job.metadata.uid as string,
        labels: manifest.metadata.labels,
      },
      credential,
    );
    const secretRef = {
      apiVersion: 'v1',
      kind: 'Secret',
      namespace: ref.namespace,
      name: secret.metadata.name,
    };
    try {
      await api.apply(secret);
    } catch (error) {
      await api.delete(ref);
      throw error;
    }
    log.info({ buildId: build.id, attempt, job: ref.name }, 'build job created');
    const pauses = new PollPauses(FIRST_POLL_MS, MAX_POLL_MS);
    try {
      while (!stopping.aborted) {
        // False once the Job's process recorded the outcome (or gave the build back).
        if (!(await renewBuildLease(db, claim, leaseMs))) break;
        progressed?.();
        const reason = jobEndReason(await api.get(ref), jobOptions.deadlineSeconds);
        if (reason !== null) {
          await this.#failUnrecorded(claim, reason);
          break;
        }
        await sleep(pauses.next(), undefined, { signal: stopping }).catch(() => {});
      }
    } finally {
      // A Job that runs on without this builder still needs its credential.
      const jobRunsOn =
        stopping.aborted && jobEndReason(await api.get(ref), jobOptions.deadlineSeconds) === null;
      if (!jobRunsOn) await api.delete(secretRef);
    }
    if (stopping.aborted) {
      log.info({ buildId: build.id, job: ref.name }, 'builder stopping; the build job goes on');
    }
  }

  /** One Job per build: an earlier attempt's (ended, or hung without its lease) goes. */
  async #removeEarlierJobs(buildId: string, keep: string): Promise<void> {
    const { api, job } = this.#options;
    const selector = `${LABELS.managedBy}=replix,${LABELS.buildId}=${labelValue(buildId)}`;
    for (const earlier of await api.list('batch/v1', 'Job', selector, job.namespace)) {
      if (earlier.metadata.name === keep) continue;
      await api.delete({
        apiVersion: 'batch/v1',
        kind: 'Job',
        namespace: earlier.metadata.namespace,
        name: earlier.metadata.name,
      });
    }
  }

  /** Fails the claim's attempt with `reason`, unless the Job's process recorded it already. */
  async #failUnrecorded(claim: BuildClaim, reason: string): Promise<void> {
    const startedAt = claim.build.started_at ?? new Date();
    const elapsedMs = Math.max(0, Date.now() - startedAt.getTime());
    const recorded = await finishBuild(this.#options.db, claim, {
      status: 'failed',
      finishedAt: new Date(),
      durationSeconds: Math.round(elapsedMs / 1000),
      computeType: COMPUTE_TYPE,
      costEstimateCents: buildCostCents(COMPUTE_TYPE, elapsedMs),
      error: reason,
    });
    if (recorded) {
      this.#options.log.warn({ buildId: claim.build.id, reason }, 'build job ended unrecorded');
      await appendLogLine(this.#options.db, claim.build.id, `Build failed: ${reason}`);
    }
  }
}
