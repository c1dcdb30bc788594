import { mkdtempSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { resourceByKind } from './api-resources.ts';
import { EventRecorder } from './event-recorder.ts';
import { LocalPod } from './local-pod.ts';
import { LoopbackAddresses } from './loopback-addresses.ts';
import type { ObjectStore, StoredObject, StoreEvent } from './object-store.ts';
import type { PodLogs } from './pod-logs.ts';

const PODS = resourceByKind('Pod');

export interface KubeletOptions {
  /** How often probes run at most (a pod is ready this soon after it answers); 100 ms unless set. */
  readonly probeIntervalMs?: number;
  /**
   * `<namespace>/<claim name>` → the local folder standing for that PersistentVolumeClaim; a
   * claim not named here gets a folder of its own under the kubelet's folder.
   */
  readonly claimDirs?: Readonly<Record<string, string>>;
}

/**
 * The fake's kubelet: every Pod in the store runs here as local processes (`LocalPod`), each
 * with its own loopback address as `status.podIP` (127.77.x.y, one whose container ports no
 * other program holds). A deleted Pod stays, with its
 * `deletionTimestamp`, until its processes are gone; then the kubelet removes it.
 */
export class LocalKubelet {
  readonly #store: ObjectStore;
  readonly #logs: PodLogs;
  readonly #events: EventRecorder;
  readonly #addresses = new LoopbackAddresses('127.77');
  readonly #pods = new Map<string, LocalPod>();
  readonly #rootDir = mkdtempSync(join(tmpdir(), 'replix-kubelet-'));
  readonly #probeIntervalMs: number;
  readonly #claimDirs: Readonly<Record<string, string>>;
  readonly #stopWatching: () => void;
  #closed = false;

  constructor(store: ObjectStore, logs: PodLogs, options: KubeletOptions = {}) {
    this.#store = store;
    this.#logs = logs;
    this.#events = new EventRecorder(store, 'kubelet');
    this.#probeIntervalMs = options.probeIntervalMs ?? 100;
    this.#claimDirs = options.claimDirs ?? {};
    store.holdDeletion((object) => object.kind === 'Pod');
    // Reactions wait for the write that caused them to reach every watcher first.
    this.#stopWatching = store.onChange((event) => queueMicrotask(() => this.#observe(event)));
  }

  /**
   * The folder of a PersistentVolumeClaim: every pod mounting the claim shares it, and it
   * outlives them, as a ReadWriteMany volume does. The claim object itself is not needed
   * (the fake binds every claim at once).
   */
  claimDir(namespace: string, claimName: string): string {
    const named = this.#claimDirs[`${namespace}/${claimName}`];
    if (named !== undefined) return named;
    return join(
      this.#rootDir,
      'claims',
      `${encodeURIComponent(namespace)}_${encodeURIComponent(claimName)}`,
    );
  }

  /** Stops every pod at once (SIGKILL) and removes their folders. */
  async close(): Promise<void> {
    this.#closed = true;
    this.#stopWatching();
    await Promise.all([...this.#pods.values()].map((pod) => pod.terminate(0)));
    this.#pods.clear();
    rmSync(this.#rootDir, { recursive: true, force: true });
  }

  #observe({ type, created, object }: StoreEvent): void {
    if (this.#closed) return;
    const { namespace, name } = object.metadata;
    if (object.kind === 'Secret' || object.kind === 'ConfigMap') {
      if (type === 'deleted') return;
      for (const [key, pod] of this.#pods) {
        if (key.startsWith(`${namespace}/`)) pod.refresh(object.kind, name);
      }
      return;
    }
    if (object.kind !== 'Pod') return;
    const key = `${namespace}/${name}`;
    if (type === 'deleted') {
      const pod = this.#pods.get(key);
      if (pod) void this.#stop(key, pod, 0);
    } else if (object.metadata.deletionTimestamp !== undefined) {
      const pod = this.#pods.get(key);
      if (!pod) this.#store.finishDeletion(PODS, namespace, name);
      else void this.#stop(key, pod, Number(object.metadata.deletionGracePeriodSeconds ?? 30));
    } else if (created && !this.#pods.has(key)) {
      this.#startPod(key, object);
    }
  }

  #startPod(key: string, object: StoredObject): void {
    const pod = new LocalPod(
      {
        store: this.#store,
        logs: this.#logs,
        events: this.#events,
        probeIntervalMs: this.#probeIntervalMs,
        rootDir: this.#rootDir,
        claimDir: (namespace, claimName) => this.claimDir(namespace, claimName),
        addresses: this.#addresses,
      },
      object,
    );
    this.#pods.set(key, pod);
    pod.start();
  }

  async #stop(key: string, pod: LocalPod, graceSeconds: number): Promise<void> {
    await pod.terminate(graceSeconds);
    if (this.#pods.get(key) !== pod) return;
    this.#pods.delete(key);
    if (pod.podIP) this.#addresses.release(pod.podIP);
    const [namespace, name] = key.split('/') as [string, string];
    this.#logs.forget(namespace, name);
    this.#store.finishDeletion(PODS, namespace, name);
  }
}
