import { resourceByKind } from './api-resources.ts';
import type { JsonObject, ObjectStore, StoredObject, StoreEvent } from './object-store.ts';
import type { PodLogs } from './pod-logs.ts';
import { ownerReference, templateHash } from './pod-template.ts';

export interface ControllerOptions {
  /** How long a Deployment's pods take to become ready; 50 ms unless set. */
  readonly readyDelayMs?: number;
}

const PODS = resourceByKind('Pod');
const DEPLOYMENTS = resourceByKind('Deployment');
const JOBS = resourceByKind('Job');

/**
 * What the kube-controller-manager and kubelet would do for the driver's objects, simplified:
 * a Deployment gets `replicas` Pods named `<deployment>-<template hash>-<n>` (owned by the
 * Deployment itself: there are no ReplicaSets) that become Running and ready after a delay,
 * then a ready status; a Job gets one Pod and stays active until a test finishes it. Pod logs
 * are the lines a test appends.
 */
export class SimulatedController {
  readonly #timers = new Set<NodeJS.Timeout>();
  readonly #neverReady = new Set<string>();

  readonly #store: ObjectStore;
  readonly #logs: PodLogs;
  readonly #readyDelayMs: number;

  constructor(store: ObjectStore, logs: PodLogs, options: ControllerOptions = {}) {
    this.#store = store;
    this.#logs = logs;
    this.#readyDelayMs = options.readyDelayMs ?? 50;
    store.onChange((event) => this.#observe(event));
  }

  /** The Deployment's pods never become ready: its rollout fails with ProgressDeadlineExceeded. */
  failDeployment(namespace: string, name: string): void {
    this.#neverReady.add(`${namespace}/${name}`);
    try {
      this.#rollOut(this.#store.get(DEPLOYMENTS, namespace, name));
    } catch {
      // Not applied yet: it fails when it is.
    }
  }

  /** Ends the Job's pod with this outcome, and reports it in the Job's status. */
  finishJob(namespace: string, name: string, outcome: 'succeeded' | 'failed'): void {
    const job = this.#store.get(JOBS, namespace, name);
    const time = new Date().toISOString().replace(/\.\d+Z$/, 'Z');
    const condition = outcome === 'succeeded' ? 'Complete' : 'Failed';
    const podPhase = outcome === 'succeeded' ? 'Succeeded' : 'Failed';
    for (const pod of this.#store.list(PODS, namespace, (labels) => labels['job-name'] === name)) {
      this.#store.setStatus(PODS, namespace, pod.metadata.name, { phase: podPhase });
    }
    this.#store.setStatus(JOBS, namespace, name, {
      ...(job.status as JsonObject),
      active: 0,
      [outcome]: 1,
      ...(outcome === 'succeeded' ? { completionTime: time } : {}),
      conditions: [
        { type: condition, status: 'True', lastTransitionTime: time, lastProbeTime: time },
      ],
    });
  }

  /** A line the pod's container wrote, for `/pods/<name>/log`. */
  appendLog(namespace: string, pod: string, line: string, time = new Date()): void {
    this.#logs.append(namespace, pod, line, time);
  }

  stop(): void {
    for (const timer of this.#timers) clearTimeout(timer);
    this.#timers.clear();
  }

  #observe(event: StoreEvent): void {
    if (event.type !== 'applied') return;
    const { object } = event;
    // A new generation (spec change) starts a rollout; a labels-only change does not.
    const observed = (object.status as { observedGeneration?: number } | undefined)
      ?.observedGeneration;
    if (object.kind === 'Deployment' && object.metadata.generation !== observed)
      this.#rollOut(object);
    if (event.object.kind === 'Job' && event.object.status === undefined)
      this.#startJob(event.object);
  }

  /** Replaces the pods of an older template, reports progress, then readiness after the delay. */
  #rollOut(deployment: StoredObject): void {
    const { name, namespace, generation } = deployment.metadata as unknown as {
      name: string;
      namespace: string;
      generation: number;
    };
    const spec = deployment.spec as {
      replicas?: number;
      template?: { metadata?: JsonObject; spec?: JsonObject };
    };
    const replicas = spec.replicas ?? 1;
    const hash = templateHash(spec.template);
    const owned = (labels: Record<string, string>) => labels['replix.fake/deployment'] === name;
    for (const pod of this.#store.list(PODS, namespace, owned)) {
      const labels = pod.metadata.labels as Record<string, string>;
      if (labels['pod-template-hash'] !== hash)
        this.#store.delete(PODS, namespace, pod.metadata.name);
    }
    const failing = this.#neverReady.has(`${namespace}/${name}`);
    const pods = Array.from({ length: replicas }, (_, n) => `${name}-${hash}-${n}`);
    for (const pod of pods) this.#putPod(deployment, pod, hash, 'Pending');
    const progressing = failing
      ? { type: 'Progressing', status: 'False', reason: 'ProgressDeadlineExceeded' }
      : { type: 'Progressing', status: 'True', reason: 'ReplicaSetUpdated' };
    this.#store.setStatus(DEPLOYMENTS, namespace, name, {
      observedGeneration: generation,
      replicas,
      updatedReplicas: replicas,
      unavailableReplicas: replicas,
      conditions: [
        { type: 'Available', status: 'False', reason: 'MinimumReplicasUnavailable' },
        progressing,
      ],
    });
    if (failing) return;
    const timer = setTimeout(() => {
      this.#timers.delete(timer);
      this.#becomeReady(namespace, name, generation, hash, pods);
    }, this.#readyDelayMs);
    this.#timers.add(timer);
  }

  #becomeReady(
    namespace: string,
    name: string,
    generation: number,
    hash: string,
    pods: string[],
  ): void {
    let current: StoredObject;
    try {
      current = this.#store.get(DEPLOYMENTS, namespace, name);
    } catch {
      return; // deleted meanwhile
    }
    if (current.metadata.generation !== generation || this.#neverReady.has(`${namespace}/${name}`))
      return;
    for (const pod of pods) this.#putPod(current, pod, hash, 'Running');
    this.#store.setStatus(DEPLOYMENTS, namespace, name, {
      observedGeneration: generation,
      replicas: pods.length,
      updatedReplicas: pods.length,
      readyReplicas: pods.length,
      availableReplicas: pods.length,
      conditions: [
        { type: 'Available', status: 'True', reason: 'MinimumReplicasAvailable' },
        { type: 'Progressing', status: 'True', reason: 'NewReplicaSetAvailable' },
      ],
    });
  }

  #putPod(owner: StoredObject, name: string, hash: string, phase: 'Pending' | 'Running'): void {
    const template = ((owner.spec as JsonObject).template ?? {}) as {
      metadata?: JsonObject;
      spec?: JsonObject;
    };
    const labels = {
      ...(template.metadata?.labels as object),
      'pod-template-hash': hash,
      'replix.fake/deployment': owner.metadata.name,
    };
    this.#store.put(PODS, {
      apiVersion: 'v1',
      kind: 'Pod',
      metadata: {
        name,
        namespace: owner.metadata.namespace,
        labels,
        ownerReferences: [ownerReference(owner)],
      },
      spec: template.spec ?? {},
      status: {
        phase,
        conditions: [{ type: 'Ready', status: phase === 'Running' ? 'True' : 'False' }],
      },
    });
  }

  #startJob(job: StoredObject): void {
    const { name, namespace } = job.metadata as { name: string; namespace: string };
    const template = ((job.spec as JsonObject).template ?? {}) as {
      metadata?: JsonObject;
      spec?: JsonObject;
    };
    this.#store.put(PODS, {
      apiVersion: 'v1',
      kind: 'Pod',
      metadata: {
        name: `${name}-0`,
        namespace,
        labels: {
          ...(template.metadata?.labels as object),
          'job-name': name,
          'batch.kubernetes.io/job-name': name,
        },
        ownerReferences: [ownerReference(job)],
      },
      spec: template.spec ?? {},
      status: { phase: 'Running' },
    });
    const startTime = new Date().toISOString().replace(/\.\d+Z$/, 'Z');
    this.#store.setStatus(JOBS, namespace, name, { active: 1, startTime });
  }
}
