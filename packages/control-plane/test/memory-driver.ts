import type {
  Driver,
  Endpoint,
  InstanceHandle,
  LogChunk,
  ReplicaState,
} from '../src/adapters/drivers/driver.ts';
import type { InstanceKeySet } from '../src/adapters/drivers/instance-key-set.ts';
import type { InstanceLaunch } from '../src/adapters/drivers/instance-launch.ts';
import type { Clock } from '../src/application/reconciler/goal-run.ts';

/**
 * How a started instance behaves: `loads` answers /health 200 after `loadPolls` health checks;
 * `never` keeps running without ever loading; `exits` dies while loading, leaving `logLines`.
 */
export type InstanceBehaviour =
  | { readonly kind: 'loads'; readonly loadPolls: number }
  | { readonly kind: 'never' }
  | { readonly kind: 'exits'; readonly logLines: readonly string[] };

interface MemoryInstance {
  readonly launch: InstanceLaunch;
  readonly behaviour: InstanceBehaviour;
  alive: boolean;
  healthChecks: number;
  keys: InstanceKeySet;
}

type DriverMethod = Exclude<keyof Driver, 'name' | 'reapOrphans'>;

/**
 * A `Driver` that runs instances in memory, for unit tests of what drives it: every call is
 * recorded (`calls`), any call can be made to fail (`failNext`, or `beforeCall` for anything
 * else: a control plane dying mid-step), and each instance loads, never loads or exits as told
 * (`behaviours`). Replicas are reached at `memory://<instance>/<ordinal>`; `healthStatusOf`
 * answers for them as the instance's /health would.
 */
export class MemoryDriver implements Driver {
  readonly name = 'memory';
  readonly instances = new Map<string, MemoryInstance>();
  readonly endpoints = new Map<string, Endpoint>();
  /** Per database: the instance its endpoint sends queries to, or the 503 message. */
  readonly routes = new Map<string, { instanceId: string } | { unrouted: string }>();
  readonly calls: string[] = [];
  /** How the next instances started behave, in order (then `loads` after one check). */
  readonly behaviours: InstanceBehaviour[] = [];
  /** Runs before every call (after it is recorded); a throw fails the call. */
  beforeCall: ((method: DriverMethod, subject: string) => void) | undefined;
  readonly #failures = new Map<DriverMethod, Error[]>();
  #nextPort = 7000;

  /** The next call of `method` throws `error`. */
  failNext(method: DriverMethod, error: Error): void {
    this.#failures.set(method, [...(this.#failures.get(method) ?? []), error]);
  }

  #call(method: DriverMethod, subject: string): void {
    this.calls.push(`${method} ${subject}`);
    this.beforeCall?.(method, subject);
    const error = this.#failures.get(method)?.shift();
    if (error) throw error;
  }

  async start(launch: InstanceLaunch): Promise<InstanceHandle> {
    this.#call('start', launch.instanceId);
    const running = this.instances.get(launch.instanceId);
    if (!running?.alive) {
      this.instances.set(launch.instanceId, {
        launch,
        behaviour: this.behaviours.shift() ?? { kind: 'loads', loadPolls: 1 },
        alive: true,
        healthChecks: 0,
        keys: launch.keys,
      });
    }
    const port = this.#nextPort++;
    return {
      instanceId: launch.instanceId,
      privateUrl: `memory://${launch.instanceId}/0`,
      containerRef: `memory:${launch.instanceId}`,
      port,
      pid: null,
    };
  }

  async openEndpoint(databaseId: string, port: number | null): Promise<Endpoint> {
    this.#call('openEndpoint', databaseId);
    const endpointPort = port ?? this.#nextPort++;
    const endpoint = { port: endpointPort, url: `http://127.0.0.1:${endpointPort}` };
    this.endpoints.set(databaseId, endpoint);
    return endpoint;
  }

  async route(databaseId: string, instanceId: string): Promise<void> {
    this.#call('route', `${databaseId} ${instanceId}`);
    this.routes.set(databaseId, { instanceId });
  }

  async unroute(databaseId: string, message: string): Promise<void> {
    this.#call('unroute', databaseId);
    this.routes.set(databaseId, { unrouted: message });
  }

  async closeEndpoint(databaseId: string): Promise<void> {
    this.#call('closeEndpoint', databaseId);
    this.endpoints.delete(databaseId);
    this.routes.delete(databaseId);
  }

  async dropCheckpoints(databaseId: string): Promise<void> {
    this.#call('dropCheckpoints', databaseId);
  }

  async stop(instanceId: string): Promise<void> {
    this.#call('stop', instanceId);
    const instance = this.instances.get(instanceId);
    if (instance) instance.alive = false;
  }

  async isAlive(instanceId: string): Promise<boolean> {
    this.#call('isAlive', instanceId);
    return this.instances.get(instanceId)?.alive ?? false;
  }

  async replicas(instanceId: string): Promise<ReplicaState[]> {
    this.#call('replicas', instanceId);
    const instance = this.instances.get(instanceId);
    if (!instance) return [];
    return Array.from({ length: instance.launch.replicas }, (_, ordinal) => ({
      ordinal,
      url: instance.alive ? `memory://${instanceId}/${ordinal}` : null,
      alive: instance.alive,
    }));
  }

  async updateKeys(instanceId: string, keys: InstanceKeySet): Promise<void> {
    this.#call('updateKeys', instanceId);
    const instance = this.instances.get(instanceId);
    if (instance) instance.keys = keys;
  }

  async readLogs(instanceId: string, _token: string | undefined): Promise<LogChunk> {
    this.#call('readLogs', instanceId);
    const behaviour = this.instances.get(instanceId)?.behaviour;
    const lines = behaviour?.kind === 'exits' ? behaviour.logLines : [];
    return { lines: lines.map((message) => ({ message, timestamp: 0 })), nextToken: '' };
  }

  /** A graceful exit: the endpoints close and the instances stop. */
  async shutdown(): Promise<string[]> {
    this.#call('shutdown', '');
    const stopped = [...this.instances].filter(([, instance]) => instance.alive);
    for (const [, instance] of stopped) instance.alive = false;
    this.endpoints.clear();
    this.routes.clear();
    return stopped.map(([id]) => id);
  }

  /** What a replica's /health answers: 200 once its instance has loaded, 503 before, 0 dead. */
  healthStatusOf = async (replicaUrl: string): Promise<number> => {
    const instance = this.instances.get(new URL(replicaUrl).hostname);
    if (!instance?.alive) return 0;
    instance.healthChecks++;
    const { behaviour } = instance;
    if (behaviour.kind === 'exits') {
      instance.alive = false;
      return 0;
    }
    return behaviour.kind === 'loads' && instance.healthChecks > behaviour.loadPolls ? 200 : 503;
  };

  /** The instances alive now. */
  aliveIds(): string[] {
    return [...this.instances].filter(([, instance]) => instance.alive).map(([id]) => id);
  }
}

/** A clock that only moves when slept on: a deploy's timeouts pass in no time. */
export class FakeClock implements Clock {
  #now: number;

  constructor(start = Date.now()) {
    this.#now = start;
  }

  now(): number {
    return this.#now;
  }

  async sleep(ms: number, signal: AbortSignal): Promise<void> {
    if (signal.aborted) return;
    this.#now += ms;
  }
}
