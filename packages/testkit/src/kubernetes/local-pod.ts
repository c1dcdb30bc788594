import { mkdir, rm } from 'node:fs/promises';
import { join } from 'node:path';
import process from 'node:process';
import { setTimeout as sleep } from 'node:timers/promises';
import { resourceByKind } from './api-resources.ts';
import {
  ContainerConfigError,
  containerEnvironment,
  expandReferences,
  type PodFields,
} from './container-env.ts';
import { type ContainerExit, type ContainerLaunch, ContainerProcess } from './container-process.ts';
import type { EventRecorder } from './event-recorder.ts';
import { claimAddress, type LoopbackAddresses } from './loopback-addresses.ts';
import type { JsonObject, ObjectStore, StoredObject } from './object-store.ts';
import type { PodLogs } from './pod-logs.ts';
import { PodVolumes, VolumeNotReady } from './pod-volumes.ts';
import { failureWindowMs, type Probe, runProbe } from './probes.ts';
import { isPort } from './tcp-port.ts';

const PODS = resourceByKind('Pod');

/** What every pod of one kubelet shares. */
export interface PodRuntime {
  readonly store: ObjectStore;
  readonly logs: PodLogs;
  readonly events: EventRecorder;
  /** How often probes run at most; the spec's periods still time failures. */
  readonly probeIntervalMs: number;
  /** Pods' folders (volumes, working directories) go under it. */
  readonly rootDir: string;
  /** The local folder of a namespace's PersistentVolumeClaim, shared by the pods mounting it. */
  readonly claimDir: (namespace: string, claimName: string) => string;
  /** Where pod IPs come from. */
  readonly addresses: LoopbackAddresses;
}

interface Container extends JsonObject {
  name: string;
  image?: string;
  command?: string[];
  args?: string[];
  workingDir?: string;
  ports?: { name?: string; containerPort?: number }[];
  readinessProbe?: Probe;
  livenessProbe?: Probe;
  startupProbe?: Probe;
  lifecycle?: { preStop?: { sleep?: { seconds?: number } } };
}

type ContainerStateField =
  | { waiting: { reason: string; message?: string } }
  | { running: { startedAt: string } }
  | {
      terminated: {
        exitCode: number;
        reason: string;
        startedAt?: string;
        finishedAt: string;
        signal?: number;
      };
    };

interface ContainerStatus {
  readonly name: string;
  readonly image: string;
  restartCount: number;
  /** Restarts since it last ran a good while: the back-off doubles with each. */
  backOffs: number;
  ready: boolean;
  started: boolean;
  state: ContainerStateField;
  lastState?: ContainerStateField;
  process?: ContainerProcess;
}

const RETRY_MS = 500;
const MAX_BACKOFF_MS = 5000;
const BACKOFF_RESET_MS = 10_000;

/**
 * One Pod run by the local kubelet: volumes, init containers one after another, then the
 * containers as local processes, restarted per `restartPolicy`, probed, and stopped as the
 * kubelet stops a pod. Its `status` (phase, conditions, podIP, container statuses) is
 * written to the store as it changes.
 */
export class LocalPod {
  readonly #runtime: PodRuntime;
  readonly #pod: StoredObject;
  readonly #spec: JsonObject;
  /** Empty until the pod's address is claimed, first thing when it starts. */
  #podIP = '';
  readonly #dir: string;
  readonly #volumes: PodVolumes;
  readonly #stop = new AbortController();
  readonly #init: ContainerStatus[];
  readonly #main: ContainerStatus[];
  readonly #startTime = now();
  readonly #transitions = new Map<string, { status: string; time: string }>();
  #phase: 'Pending' | 'Running' | 'Succeeded' | 'Failed' = 'Pending';
  #initialized = false;
  #running: Promise<void> = Promise.resolve();
  #terminating: Promise<void> | undefined;

  constructor(runtime: PodRuntime, pod: StoredObject) {
    this.#runtime = runtime;
    this.#pod = pod;
    this.#spec = (pod.spec ?? {}) as JsonObject;
    this.#dir = join(runtime.rootDir, `${pod.metadata.namespace}_${pod.metadata.name}`);
    this.#volumes = new PodVolumes(
      join(this.#dir, 'volumes'),
      this.#spec,
      (kind, name) => this.#lookup(kind, name),
      (claimName) => runtime.claimDir(pod.metadata.namespace ?? 'default', claimName),
    );
    const status = (container: Container): ContainerStatus => ({
      name: container.name,
      image: container.image ?? '',
      restartCount: 0,
      backOffs: 0,
      ready: false,
      started: false,
      state: { waiting: { reason: 'PodInitializing' } },
    });
    this.#init = this.#containers('initContainers').map(status);
    this.#main = this.#containers('containers').map(status);
  }

  /** The pod's address; undefined until it has one. */
  get podIP(): string | undefined {
    return this.#podIP || undefined;
  }

  start(): void {
    const { namespace, name } = this.#pod.metadata;
    this.#event(
      'Normal',
      'Scheduled',
      `Successfully assigned ${namespace}/${name} to replix-fake-node`,
    );
    this.#publish();
    this.#running = this.#run().catch((error: unknown) => {
      if (!this.#stop.signal.aborted) this.#warn('Failed', `the fake kubelet failed: ${error}`);
    });
  }

  /** The Secret or ConfigMap changed: volumes that show it are rewritten. */
  refresh(kind: 'Secret' | 'ConfigMap', name: string): void {
    if (this.#stop.signal.aborted) return;
    void this.#volumes.refresh(kind, name).catch(() => {});
  }

  /**
   * Stops the pod as the kubelet does: each running container's `preStop` sleep, then
   * SIGTERM, then SIGKILL once `graceSeconds` (counted from now) are over; a second call
   * with 0 kills at once. Resolves when no process of the pod is left.
   */
  terminate(graceSeconds: number): Promise<void> {
    if (this.#terminating) {
      // Stopping already, and now at once (the kubelet closes): no more waiting.
      if (graceSeconds === 0) {
        for (const status of [...this.#init, ...this.#main]) status.process?.signal('SIGKILL');
      }
      return this.#terminating;
    }
    this.#terminating = (async () => {
      this.#stop.abort();
      this.#publish();
      const deadline = Date.now() + graceSeconds * 1000;
      const containers = this.#containers('containers');
      await Promise.all(
        [...this.#init, ...this.#main].map(async (status) => {
          const process = status.process;
          if (!process?.running) return;
          this.#event('Normal', 'Killing', `Stopping container ${status.name}`);
          const preStop = containers.find((c) => c.name === status.name)?.lifecycle?.preStop;
          const preStopMs = (preStop?.sleep?.seconds ?? 0) * 1000;
          if (preStopMs > 0)
            await Promise.race([sleep(Math.min(preStopMs, deadline - Date.now())), process.exited]);
          process.signal('SIGTERM');
          const left = deadline - Date.now();
          if (left > 0) await Promise.race([process.exited, sleep(left)]);
          process.signal('SIGKILL');
          await process.exited;
        }),
      );
      await this.#running;
      await rm(this.#dir, { recursive: true, force: true }).catch(() => {});
    })();
    return this.#terminating;
  }

  async #run(): Promise<void> {
    const signal = this.#stop.signal;
    const ports = this.#containers('containers').flatMap((container) =>
      (container.ports ?? []).map((port) => port.containerPort).filter(isPort),
    );
    this.#podIP = await claimAddress(this.#runtime.addresses, ports);
    if (signal.aborted) return;
    this.#publish();
    for (;;) {
      try {
        await mkdir(this.#dir, { recursive: true });
        await this.#volumes.prepare();
        break;
      } catch (error) {
        if (!(error instanceof VolumeNotReady)) throw error;
        this.#warn('FailedMount', error.message);
        await sleep(RETRY_MS, undefined, { signal }).catch(() => {});
        if (signal.aborted) return;
      }
    }
    const initContainers = this.#containers('initContainers');
    for (const [index, container] of initContainers.entries()) {
      const succeeded = await this.#runInit(container, this.#init[index] as ContainerStatus);
      if (!succeeded) return;
    }
    this.#initialized = true;
    this.#publish();
    await Promise.all(
      this.#containers('containers').map((container, index) =>
        this.#supervise(container, this.#main[index] as ContainerStatus),
      ),
    );
    if (signal.aborted) return;
    const failed = this.#main.some(
      (status) => 'terminated' in status.state && status.state.terminated.exitCode !== 0,
    );
    this.#phase = failed ? 'Failed' : 'Succeeded';
    this.#publish();
  }

  /** Runs an init container until it succeeds; false when it never will (or the pod stops). */
  async #runInit(container: Container, status: ContainerStatus): Promise<boolean> {
    const restartPolicy = (this.#spec.restartPolicy as string | undefined) ?? 'Always';
    for (;;) {
      const exit = await this.#runOnce(container, status, true);
      if (exit === undefined) return false;
      if (exit.exitCode === 0) return true;
      if (restartPolicy === 'Never') {
        this.#phase = 'Failed';
        this.#publish();
        return false;
      }
      if (!(await this.#backOff(status))) return false;
    }
  }

  /** Runs a container, restarting it as `restartPolicy` says, until it is done. */
  async #supervise(container: Container, status: ContainerStatus): Promise<void> {
    const restartPolicy = (this.#spec.restartPolicy as string | undefined) ?? 'Always';
    for (;;) {
      const startedAt = Date.now();
      const exit = await this.#runOnce(container, status, false);
      if (exit === undefined) return;
      const restart =
        restartPolicy === 'Always' || (restartPolicy === 'OnFailure' && exit.exitCode !== 0);
      if (!restart) return;
      // A container that ran a good while before it exited starts its back-off afresh.
      if (Date.now() - startedAt > BACKOFF_RESET_MS) status.backOffs = 0;
      if (!(await this.#backOff(status))) return;
    }
  }

  /** Waits before a restart (CrashLoopBackOff); false when the pod stops meanwhile. */
  async #backOff(status: ContainerStatus): Promise<boolean> {
    const delay = Math.min(200 * 2 ** status.backOffs, MAX_BACKOFF_MS);
    status.backOffs += 1;
    status.lastState = status.state;
    status.state = {
      waiting: {
        reason: 'CrashLoopBackOff',
        message: `back-off ${delay}ms restarting failed container=${status.name} pod=${this.#pod.metadata.name}`,
      },
    };
    status.restartCount += 1;
    this.#publish();
    await sleep(delay, undefined, { signal: this.#stop.signal }).catch(() => {});
    return !this.#stop.signal.aborted;
  }

  /** One run of the container's process; undefined when the pod stopped first. */
  async #runOnce(
    container: Container,
    status: ContainerStatus,
    init: boolean,
  ): Promise<ContainerExit | undefined> {
    const signal = this.#stop.signal;
    let launch: ContainerLaunch | undefined;
    while (launch === undefined) {
      try {
        launch = this.#launchOf(container);
      } catch (error) {
        if (!(error instanceof ContainerConfigError)) throw error;
        status.state = {
          waiting: { reason: 'CreateContainerConfigError', message: error.message },
        };
        this.#publish();
        this.#warn('Failed', `Error: ${error.message}`);
        await sleep(RETRY_MS, undefined, { signal }).catch(() => {});
      }
      if (signal.aborted) return undefined;
    }
    // Nothing awaits between the check above and the spawn: a stopping pod starts nothing.
    const { namespace, name } = this.#pod.metadata as { namespace: string; name: string };
    const process = new ContainerProcess(launch, (line) =>
      this.#runtime.logs.append(namespace, name, line, new Date(), container.name),
    );
    const startedAt = now();
    status.process = process;
    status.state = { running: { startedAt } };
    status.started = container.startupProbe === undefined;
    status.ready = false;
    if (!init && this.#phase === 'Pending') this.#phase = 'Running';
    this.#event('Normal', 'Started', `Started container ${container.name}`);
    this.#publish();
    // A probe that cannot run is a failing probe, never a crash of the fake.
    if (!init) void this.#probe(container, status, process).catch(() => {});
    const exit = await process.exited;
    status.ready = false;
    status.started = false;
    status.state = {
      terminated: {
        exitCode: exit.exitCode,
        reason: exit.exitCode === 0 ? 'Completed' : 'Error',
        startedAt,
        finishedAt: now(),
      },
    };
    this.#publish();
    if (exit.exitCode !== 0 && init) {
      this.#warn('BackOff', `init container ${container.name} exited with code ${exit.exitCode}`);
    }
    return signal.aborted ? undefined : exit;
  }

  /** The process to start: command and args with env references, mounts and the pod IP. */
  #launchOf(container: Container): ContainerLaunch {
    const { name, namespace, uid, labels } = this.#pod.metadata as {
      name: string;
      namespace: string;
      uid: string;
      labels?: Record<string, string>;
    };
    const fields: PodFields = { name, namespace, uid, podIP: this.#podIP, labels: labels ?? {} };
    const env = containerEnvironment(container, fields, (kind, object) =>
      this.#lookup(kind, object),
    );
    const command = [...(container.command ?? []), ...(container.args ?? [])];
    if (command.length === 0 || !container.command) {
      throw new ContainerConfigError(
        `container ${container.name} has no command: the fake kubelet runs commands, not images`,
      );
    }
    const mounts = this.#volumes.mountsOf(container);
    const local = (text: string) => mounts.rewrite(text).replaceAll('0.0.0.0', this.#podIP);
    const localEnv: Record<string, string> = {
      PATH: process.env.PATH ?? '/usr/local/bin:/usr/bin:/bin',
      HOSTNAME: name,
      HOME: this.#dir,
    };
    for (const [key, value] of Object.entries(env)) localEnv[key] = local(value);
    const [file, ...args] = command.map((part) => local(expandReferences(part, env)));
    return {
      file: file === 'node' ? process.execPath : (file as string),
      args,
      cwd: container.workingDir ? local(container.workingDir) : this.#dir,
      env: localEnv,
    };
  }

  /**
   * The container's probes while this process runs: startup first, then readiness and
   * liveness. A success counts at once (probes run every `probeIntervalMs`); a failure
   * counts only once the probe kept failing for its `periodSeconds × failureThreshold`.
   */
  async #probe(container: Container, status: ContainerStatus, process: ContainerProcess) {
    const signal = this.#stop.signal;
    const { startupProbe, readinessProbe, livenessProbe } = container;
    const startedAt = Date.now();
    let lastAlive = startedAt;
    let lastReady = startedAt;
    const port = (value: number | string | undefined) => this.#portOf(container, value);
    while (process.running && !signal.aborted) {
      if (!status.started && startupProbe) {
        if (await runProbe(startupProbe, this.#podIP, port)) {
          status.started = true;
          lastAlive = Date.now();
          this.#publish();
        } else if (
          Date.now() - startedAt >
          (startupProbe.initialDelaySeconds ?? 0) * 1000 + failureWindowMs(startupProbe)
        ) {
          this.#restartUnhealthy(container, process, 'Startup');
          return;
        }
      }
      if (status.started) {
        const readyNow = readinessProbe
          ? Date.now() - startedAt >= (readinessProbe.initialDelaySeconds ?? 0) * 1000 &&
            (await runProbe(readinessProbe, this.#podIP, port))
          : true;
        if (readyNow) lastReady = Date.now();
        const ready =
          readyNow ||
          (status.ready && Date.now() - lastReady < failureWindowMs(readinessProbe ?? {}));
        if (ready !== status.ready && process.running && !signal.aborted) {
          status.ready = ready;
          this.#publish();
        }
        if (livenessProbe) {
          if (await runProbe(livenessProbe, this.#podIP, port)) lastAlive = Date.now();
          else if (Date.now() - lastAlive > failureWindowMs(livenessProbe)) {
            this.#restartUnhealthy(container, process, 'Liveness');
            return;
          }
        }
      }
      await sleep(this.#runtime.probeIntervalMs, undefined, { signal }).catch(() => {});
    }
  }

  #restartUnhealthy(container: Container, process: ContainerProcess, probe: string): void {
    this.#warn('Unhealthy', `${probe} probe failed`);
    this.#event(
      'Normal',
      'Killing',
      `Container ${container.name} failed ${probe.toLowerCase()} probe, will be restarted`,
    );
    process.signal('SIGKILL');
  }

  #portOf(container: Container, port: number | string | undefined): number | undefined {
    if (typeof port === 'number') return port;
    if (port === undefined) return undefined;
    if (/^\d+$/.test(port)) return Number(port);
    return container.ports?.find((p) => p.name === port)?.containerPort;
  }

  #containers(field: 'containers' | 'initContainers'): Container[] {
    return ((this.#spec[field] ?? []) as Container[]).filter((c) => typeof c?.name === 'string');
  }

  #lookup(kind: 'Secret' | 'ConfigMap', name: string): StoredObject | undefined {
    try {
      return this.#runtime.store.get(resourceByKind(kind), this.#pod.metadata.namespace, name);
    } catch {
      return undefined;
    }
  }

  #warn(reason: string, message: string): void {
    this.#event('Warning', reason, message);
  }

  #event(type: 'Normal' | 'Warning', reason: string, message: string): void {
    this.#runtime.events.record(this.#pod, type, reason, message);
  }

  /** Writes the pod's status as it is now (the store skips a write that changes nothing). */
  #publish(): void {
    const containersReady = this.#main.length > 0 && this.#main.every((status) => status.ready);
    const ready = containersReady && !this.#stop.signal.aborted;
    const conditions = [
      this.#condition('PodScheduled', true),
      this.#condition('Initialized', this.#initialized),
      this.#condition('ContainersReady', containersReady),
      this.#condition('Ready', ready),
    ];
    const status: JsonObject = {
      phase: this.#phase,
      conditions,
      hostIP: '127.0.0.1',
      ...(this.#podIP ? { podIP: this.#podIP, podIPs: [{ ip: this.#podIP }] } : {}),
      startTime: this.#startTime,
      containerStatuses: this.#main.map(statusOf),
    };
    if (this.#init.length > 0) status.initContainerStatuses = this.#init.map(statusOf);
    const { namespace, name } = this.#pod.metadata;
    this.#runtime.store.setStatus(PODS, namespace, name, status);
  }

  #condition(type: string, value: boolean) {
    const status = value ? 'True' : 'False';
    const previous = this.#transitions.get(type);
    const transition = previous?.status === status ? previous : { status, time: now() };
    this.#transitions.set(type, transition);
    return { type, status, lastProbeTime: null, lastTransitionTime: transition.time };
  }
}

function statusOf(status: ContainerStatus): JsonObject {
  return {
    name: status.name,
    image: status.image,
    imageID: '',
    ...(status.process?.pid !== undefined ? { containerID: `local://${status.process.pid}` } : {}),
    ready: status.ready,
    started: status.started,
    restartCount: status.restartCount,
    state: status.state,
    ...(status.lastState ? { lastState: status.lastState } : { lastState: {} }),
  };
}

function now(): string {
  return new Date().toISOString().replace(/\.\d+Z$/, 'Z');
}
