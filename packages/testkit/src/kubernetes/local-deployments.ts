import { resourceByKind } from './api-resources.ts';
import { EventRecorder } from './event-recorder.ts';
import type { JsonObject, ObjectStore, StoredObject } from './object-store.ts';
import { isReadyPod, nameSuffix, ownedBy, podFromTemplate, templateHash } from './pod-template.ts';
import { ReconcileLoop } from './reconcile-loop.ts';

const PODS = resourceByKind('Pod');
const DEPLOYMENTS = resourceByKind('Deployment');

export interface DeploymentControllerOptions {
  /** Caps every Deployment's `spec.progressDeadlineSeconds` (600 by default), for tests. */
  readonly progressDeadlineMs?: number;
}

interface DeploymentSpec {
  replicas?: number;
  progressDeadlineSeconds?: number;
  template?: unknown;
  strategy?: {
    type?: string;
    rollingUpdate?: { maxSurge?: number | string; maxUnavailable?: number | string };
  };
}

/** Where a rollout stands, to tell progress from a stall. */
interface Progress {
  readonly generation: number;
  readonly key: string;
  readonly since: number;
}

/**
 * The Deployment controller of the fake's `runPods` mode: each Deployment gets
 * `spec.replicas` Pods of its template (owned by the Deployment itself: there are no
 * ReplicaSets) labelled `pod-template-hash`; a changed template rolls out within `maxSurge`
 * and `maxUnavailable` (old pods go only while enough ready ones remain; `Recreate` removes
 * them all first); the status (replicas, updated, ready, available, `Available` and
 * `Progressing` with ProgressDeadlineExceeded) follows the Pods the kubelet runs.
 */
export class LocalDeploymentController {
  readonly #store: ObjectStore;
  readonly #events: EventRecorder;
  readonly #progressDeadlineMs: number | undefined;
  readonly #progress = new Map<string, Progress>();
  readonly #loop: ReconcileLoop;

  constructor(store: ObjectStore, options: DeploymentControllerOptions = {}) {
    this.#store = store;
    this.#events = new EventRecorder(store, 'deployment-controller');
    this.#progressDeadlineMs = options.progressDeadlineMs;
    this.#loop = new ReconcileLoop(store, ['Deployment', 'Pod'], () => {
      for (const deployment of this.#store.list(DEPLOYMENTS, undefined, () => true)) {
        if (deployment.metadata.deletionTimestamp === undefined) this.#reconcile(deployment);
      }
    });
  }

  stop(): void {
    this.#loop.stop();
  }

  #reconcile(deployment: StoredObject): void {
    const spec = (deployment.spec ?? {}) as DeploymentSpec;
    const { namespace, uid } = deployment.metadata;
    const replicas = spec.replicas ?? 1;
    const hash = templateHash(spec.template);
    const pods = this.#store.list(PODS, namespace, () => true).filter((pod) => ownedBy(pod, uid));
    const live = pods.filter(
      (pod) =>
        pod.metadata.deletionTimestamp === undefined &&
        !['Succeeded', 'Failed'].includes(String((pod.status as JsonObject | undefined)?.phase)),
    );
    const hashOf = (pod: StoredObject) =>
      (pod.metadata.labels as Record<string, string> | undefined)?.['pod-template-hash'];
    let current = live.filter((pod) => hashOf(pod) === hash);
    let old = live.filter((pod) => hashOf(pod) !== hash);
    const { surge, unavailable } = rolloutBounds(spec, replicas);

    // Pods that ended (restartPolicy is Always, so only by outside hands) are replaced.
    for (const pod of pods.filter((p) => !live.includes(p) && !p.metadata.deletionTimestamp))
      this.#delete(pod);

    if (spec.strategy?.type === 'Recreate') {
      for (const pod of [...old]) old = this.#retire(deployment, pod, old);
      const stillThere = pods.some((pod) => hashOf(pod) !== hash);
      if (!stillThere) current = this.#scaleTo(deployment, current, replicas, hash);
      old = [];
    } else {
      const room = replicas + surge - (current.length + old.length);
      const wanted = Math.min(replicas, current.length + Math.max(room, 0));
      current = this.#scaleTo(deployment, current, wanted, hash);
      let available = [...current, ...old].filter(isReadyPod).length;
      const minAvailable = replicas - unavailable;
      const byReadiness = [...old].sort((a, b) => Number(isReadyPod(a)) - Number(isReadyPod(b)));
      for (const pod of byReadiness) {
        const ready = isReadyPod(pod);
        if (ready && available - 1 < minAvailable) continue;
        old = this.#retire(deployment, pod, old);
        if (ready) available -= 1;
      }
    }
    this.#writeStatus(deployment, spec, replicas, current, old);
  }

  /** Creates or deletes pods of the current template until there are `count`. */
  #scaleTo(
    deployment: StoredObject,
    current: StoredObject[],
    count: number,
    hash: string,
  ): StoredObject[] {
    const kept = [...current];
    while (kept.length > count) {
      // Unready pods go first, then the newest.
      const victim = [...kept].sort(
        (a, b) =>
          Number(isReadyPod(a)) - Number(isReadyPod(b)) ||
          String(b.metadata.creationTimestamp).localeCompare(String(a.metadata.creationTimestamp)),
      )[0] as StoredObject;
      this.#delete(victim);
      kept.splice(kept.indexOf(victim), 1);
    }
    if (kept.length !== current.length) this.#scaled(deployment, hash, current.length, count);
    while (kept.length < count) {
      const name = `${deployment.metadata.name}-${hash}-${nameSuffix()}`;
      kept.push(
        this.#store.put(PODS, podFromTemplate(deployment, name, { 'pod-template-hash': hash })),
      );
      if (kept.length === count) this.#scaled(deployment, hash, current.length, count);
    }
    return kept;
  }

  /** Deletes a pod of an older template; returns the older pods left. */
  #retire(deployment: StoredObject, pod: StoredObject, old: StoredObject[]): StoredObject[] {
    const hash = (pod.metadata.labels as Record<string, string> | undefined)?.['pod-template-hash'];
    const same = old.filter(
      (other) =>
        (other.metadata.labels as Record<string, string> | undefined)?.['pod-template-hash'] ===
        hash,
    ).length;
    this.#delete(pod);
    this.#scaled(deployment, hash ?? '', same, same - 1);
    return old.filter((other) => other !== pod);
  }

  /** The Event the deployment controller writes when it scales a template's pods. */
  #scaled(deployment: StoredObject, hash: string, from: number, to: number): void {
    const direction = to > from ? 'up' : 'down';
    this.#events.record(
      deployment,
      'Normal',
      'ScalingReplicaSet',
      `Scaled ${direction} replica set ${deployment.metadata.name}-${hash} from ${from} to ${to}`,
    );
  }

  #delete(pod: StoredObject): void {
    try {
      this.#store.delete(PODS, pod.metadata.namespace, pod.metadata.name);
    } catch {
      // Gone already.
    }
  }

  #writeStatus(
    deployment: StoredObject,
    spec: DeploymentSpec,
    replicas: number,
    current: StoredObject[],
    old: StoredObject[],
  ): void {
    const { namespace, name, uid } = deployment.metadata;
    const generation = deployment.metadata.generation as number;
    const ready = [...current, ...old].filter(isReadyPod).length;
    const updatedReady = current.filter(isReadyPod).length;
    const complete = current.length === replicas && updatedReady === replicas && old.length === 0;
    const key = `${current.length}/${updatedReady}/${old.length}`;
    const previous = this.#progress.get(uid);
    const progress =
      previous && previous.generation === generation && previous.key === key
        ? previous
        : { generation, key, since: Date.now() };
    this.#progress.set(uid, progress);
    const deadlineMs = Math.min(
      (spec.progressDeadlineSeconds ?? 600) * 1000,
      this.#progressDeadlineMs ?? Number.POSITIVE_INFINITY,
    );
    const { unavailable } = rolloutBounds(spec, replicas);
    const previousConditions = ((deployment.status as JsonObject | undefined)?.conditions ??
      []) as Condition[];
    const available = condition(
      previousConditions,
      'Available',
      ready >= replicas - unavailable,
      ready >= replicas - unavailable ? 'MinimumReplicasAvailable' : 'MinimumReplicasUnavailable',
      ready >= replicas - unavailable
        ? 'Deployment has minimum availability.'
        : 'Deployment does not have minimum availability.',
    );
    const stalled = !complete && Date.now() - progress.since > deadlineMs;
    const progressing = condition(
      previousConditions,
      'Progressing',
      !stalled,
      complete
        ? 'NewReplicaSetAvailable'
        : stalled
          ? 'ProgressDeadlineExceeded'
          : 'ReplicaSetUpdated',
      complete
        ? `ReplicaSet "${name}-${templateHash(spec.template)}" has successfully progressed.`
        : stalled
          ? `ReplicaSet "${name}-${templateHash(spec.template)}" has timed out progressing.`
          : `ReplicaSet "${name}-${templateHash(spec.template)}" is progressing.`,
    );
    const total = current.length + old.length;
    // Like the API server, counts of zero are left out.
    const counts: Record<string, number> = {
      replicas: total,
      updatedReplicas: current.length,
      readyReplicas: ready,
      availableReplicas: ready,
      unavailableReplicas: Math.max(replicas - ready, 0),
    };
    const status: JsonObject = { observedGeneration: generation };
    for (const [field, count] of Object.entries(counts)) if (count > 0) status[field] = count;
    status.conditions = [available, progressing];
    this.#store.setStatus(DEPLOYMENTS, namespace, name, status);
  }
}

interface Condition {
  type: string;
  status: string;
  reason: string;
  message: string;
  lastTransitionTime: string;
  lastUpdateTime: string;
}

/** A condition keeping its transition time while its status stays the same. */
function condition(
  previous: Condition[],
  type: string,
  value: boolean,
  reason: string,
  message: string,
): Condition {
  const status = value ? 'True' : 'False';
  const before = previous.find((c) => c.type === type);
  const time = new Date().toISOString().replace(/\.\d+Z$/, 'Z');
  const transition = before?.status === status ? before.lastTransitionTime : time;
  const update = before?.reason === reason ? before.lastUpdateTime : time;
  return { type, status, reason, message, lastTransitionTime: transition, lastUpdateTime: update };
}

/** maxSurge (percent rounded up) and maxUnavailable (rounded down), 25% each by default. */
export function rolloutBounds(
  spec: DeploymentSpec,
  replicas: number,
): { surge: number; unavailable: number } {
  const rolling = spec.strategy?.rollingUpdate ?? {};
  const resolve = (value: number | string | undefined, roundUp: boolean) => {
    const text = value ?? '25%';
    if (typeof text === 'number') return text;
    const percent = /^(\d+)%$/.exec(text);
    if (!percent) return Number.isInteger(Number(text)) ? Number(text) : 0;
    const exact = (Number(percent[1]) * replicas) / 100;
    return roundUp ? Math.ceil(exact) : Math.floor(exact);
  };
  const surge = resolve(rolling.maxSurge, true);
  const unavailable = resolve(rolling.maxUnavailable, false);
  // Both zero could never progress; the API server refuses it, the fake surges by one.
  return surge === 0 && unavailable === 0 ? { surge: 1, unavailable: 0 } : { surge, unavailable };
}
