import { resourceByKind } from './api-resources.ts';
import type { JsonObject, ObjectStore, StoredObject } from './object-store.ts';
import { nameSuffix, ownedBy, podFromTemplate } from './pod-template.ts';
import { ReconcileLoop } from './reconcile-loop.ts';

const PODS = resourceByKind('Pod');
const JOBS = resourceByKind('Job');

/**
 * The Job controller of the fake's `runPods` mode: one Pod at a time of the Job's template
 * until one succeeds (`Complete`), more than `backoffLimit` (6) have failed (`Failed`,
 * BackoffLimitExceeded) or it ran longer than `activeDeadlineSeconds` (`Failed`,
 * DeadlineExceeded, its pods deleted); a finished Job is deleted (in the background) once
 * `ttlSecondsAfterFinished` are over. `completions` and `parallelism` above 1 are not supported.
 */
export class LocalJobController {
  readonly #store: ObjectStore;
  readonly #loop: ReconcileLoop;

  constructor(store: ObjectStore) {
    this.#store = store;
    this.#loop = new ReconcileLoop(store, ['Job', 'Pod'], () => {
      for (const job of this.#store.list(JOBS, undefined, () => true)) this.#reconcile(job);
    });
  }

  stop(): void {
    this.#loop.stop();
  }

  #reconcile(job: StoredObject): void {
    if (job.metadata.deletionTimestamp !== undefined) return;
    const status = (job.status ?? {}) as JsonObject & {
      conditions?: { type: string; lastTransitionTime?: string }[];
    };
    const { namespace, name, uid } = job.metadata;
    const spec = (job.spec ?? {}) as {
      backoffLimit?: number;
      activeDeadlineSeconds?: number;
      ttlSecondsAfterFinished?: number;
    };
    const finished = status.conditions?.find((c) => c.type === 'Complete' || c.type === 'Failed');
    if (finished) {
      const ttl = spec.ttlSecondsAfterFinished;
      const since = Date.parse(finished.lastTransitionTime ?? '');
      if (ttl !== undefined && Date.now() - since >= ttl * 1000)
        this.#store.delete(JOBS, namespace, name, 'Background');
      return;
    }
    const pods = this.#store.list(PODS, namespace, () => true).filter((pod) => ownedBy(pod, uid));
    const phaseOf = (pod: StoredObject) => (pod.status as JsonObject | undefined)?.phase;
    const succeeded = pods.filter((pod) => phaseOf(pod) === 'Succeeded').length;
    const failed = pods.filter((pod) => phaseOf(pod) === 'Failed').length;
    let active = pods.filter(
      (pod) =>
        !['Succeeded', 'Failed'].includes(String(phaseOf(pod))) && !pod.metadata.deletionTimestamp,
    );
    const backoffLimit = spec.backoffLimit ?? 6;
    const time = new Date().toISOString().replace(/\.\d+Z$/, 'Z');
    const startTime = (status.startTime as string | undefined) ?? time;
    const overdue =
      spec.activeDeadlineSeconds !== undefined &&
      Date.now() - Date.parse(startTime) >= spec.activeDeadlineSeconds * 1000;
    const conditions: JsonObject[] = [];
    if (succeeded > 0) {
      conditions.push({
        type: 'Complete',
        status: 'True',
        lastTransitionTime: time,
        lastProbeTime: time,
      });
    } else if (failed > backoffLimit || overdue) {
      for (const pod of active) this.#store.delete(PODS, namespace, pod.metadata.name);
      active = [];
      conditions.push({
        type: 'Failed',
        status: 'True',
        ...(overdue
          ? { reason: 'DeadlineExceeded', message: 'Job was active longer than specified deadline' }
          : {
              reason: 'BackoffLimitExceeded',
              message: 'Job has reached the specified backoff limit',
            }),
        lastTransitionTime: time,
        lastProbeTime: time,
      });
    } else if (active.length === 0) {
      const labels = {
        'job-name': name,
        'batch.kubernetes.io/job-name': name,
        'controller-uid': uid,
      };
      active = [this.#store.put(PODS, podFromTemplate(job, `${name}-${nameSuffix()}`, labels))];
    }
    const next: JsonObject = { startTime };
    if (active.length > 0) next.active = active.length;
    if (succeeded > 0) next.succeeded = succeeded;
    if (failed > 0) next.failed = failed;
    if (succeeded > 0) next.completionTime = time;
    if (conditions.length > 0) next.conditions = conditions;
    this.#store.setStatus(JOBS, namespace, name, next);
  }
}
