import { resourceByKind } from './api-resources.ts';
import type { JsonObject, ObjectStore, StoredObject } from './object-store.ts';
import { nameSuffix, ownedBy, podFromTemplate } from './pod-template.ts';

const PODS = resourceByKind('Pod');
const JOBS = resourceByKind('Job');

/**
 * The Job controller of the fake's `runPods` mode: one Pod at a time of the Job's template
 * until one succeeds (`Complete`), more than `backoffLimit` (6) have failed (`Failed`,
 * BackoffLimitExceeded) or `activeDeadlineSeconds` have passed since its `startTime` (`Failed`,
 * DeadlineExceeded; its pods are deleted). `completions` and `parallelism` above 1 are not
 * supported.
 */
export class LocalJobController {
  readonly #store: ObjectStore;
  readonly #stopWatching: () => void;
  /** Deadline timers, one per Job (by uid). */
  readonly #deadlines = new Map<string, NodeJS.Timeout>();
  #queued = false;

  constructor(store: ObjectStore) {
    this.#store = store;
    this.#stopWatching = store.onChange(({ object }) => {
      if (object.kind === 'Job' || object.kind === 'Pod') this.#queue();
    });
  }

  stop(): void {
    this.#stopWatching();
    for (const timer of this.#deadlines.values()) clearTimeout(timer);
    this.#deadlines.clear();
  }

  #queue(): void {
    if (this.#queued) return;
    this.#queued = true;
    setImmediate(() => {
      this.#queued = false;
      for (const job of this.#store.list(JOBS, undefined, () => true)) this.#reconcile(job);
    });
  }

  #reconcile(job: StoredObject): void {
    if (job.metadata.deletionTimestamp !== undefined) return;
    const status = (job.status ?? {}) as JsonObject & { conditions?: { type: string }[] };
    if (status.conditions?.some((c) => c.type === 'Complete' || c.type === 'Failed')) return;
    const { namespace, name, uid } = job.metadata;
    const pods = this.#store.list(PODS, namespace, () => true).filter((pod) => ownedBy(pod, uid));
    const phaseOf = (pod: StoredObject) => (pod.status as JsonObject | undefined)?.phase;
    const succeeded = pods.filter((pod) => phaseOf(pod) === 'Succeeded').length;
    const failed = pods.filter((pod) => phaseOf(pod) === 'Failed').length;
    let active = pods.filter(
      (pod) =>
        !['Succeeded', 'Failed'].includes(String(phaseOf(pod))) && !pod.metadata.deletionTimestamp,
    );
    const backoffLimit = ((job.spec as JsonObject | undefined)?.backoffLimit as number) ?? 6;
    const deadlineSeconds = (job.spec as JsonObject | undefined)?.activeDeadlineSeconds as
      | number
      | undefined;
    const now = new Date();
    const time = now.toISOString().replace(/\.\d+Z$/, 'Z');
    const startTime = (status.startTime as string | undefined) ?? time;
    const deadline =
      deadlineSeconds === undefined
        ? undefined
        : Date.parse(status.startTime ? startTime : now.toISOString()) + deadlineSeconds * 1000;
    const conditions: JsonObject[] = [];
    if (succeeded === 0 && deadline !== undefined && now.getTime() >= deadline) {
      for (const pod of active) this.#store.delete(PODS, namespace, pod.metadata.name);
      active = [];
      conditions.push({
        type: 'Failed',
        status: 'True',
        reason: 'DeadlineExceeded',
        message: 'Job was active longer than specified deadline',
        lastTransitionTime: time,
        lastProbeTime: time,
      });
    } else if (succeeded > 0) {
      conditions.push({
        type: 'Complete',
        status: 'True',
        lastTransitionTime: time,
        lastProbeTime: time,
      });
    } else if (failed > backoffLimit) {
      for (const pod of active) this.#store.delete(PODS, namespace, pod.metadata.name);
      active = [];
      conditions.push({
        type: 'Failed',
        status: 'True',
        reason: 'BackoffLimitExceeded',
        message: 'Job has reached the specified backoff limit',
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
    if (deadline !== undefined && conditions.length === 0 && !this.#deadlines.has(uid)) {
      // Nothing else may change before the deadline: look again then.
      const timer = setTimeout(
        () => {
          this.#deadlines.delete(uid);
          this.#queue();
        },
        Math.max(0, deadline - now.getTime()) + 10,
      );
      timer.unref();
      this.#deadlines.set(uid, timer);
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
