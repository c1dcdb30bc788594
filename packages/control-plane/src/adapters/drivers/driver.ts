import type { InstanceKeySet } from './instance-key-set.ts';
import type { InstanceLaunch } from './instance-launch.ts';

/** A started instance, as the driver knows it. */
export interface InstanceHandle {
  readonly instanceId: string;
  /**
   * Where the control plane (health, metrics, keys, admin calls) and the database's endpoint
   * reach this instance; never shown to users, who use the database's endpoint.
   */
  readonly privateUrl: string;
  /** Driver-specific reference (process: `process:<pid>`). */
  readonly containerRef: string;
  readonly port: number | null;
  readonly pid: number | null;
}

/** One replica of an instance (read replicas: every replica serves the database's endpoint). */
export interface ReplicaState {
  /**
   * 0 … replicas − 1, stable for the instance's life: a replica restarted keeps its ordinal, so
   * it resumes the replication state named after it (`replicaReplicationId`).
   */
  readonly ordinal: number;
  /** Where the control plane reaches this replica (health, metrics, admin calls); null while it has none. */
  readonly url: string | null;
  readonly alive: boolean;
}

export interface LogChunk {
  readonly lines: Array<{ message: string; timestamp: number }>;
  /** Where the next read starts; pass it back. */
  readonly nextToken: string;
}

/** A database's stable endpoint: the address users query, the same for the database's life. */
export interface Endpoint {
  /**
   * The port users connect to: the process driver's own listener; the Kubernetes driver's
   * gateway port for the URL's scheme (443 or 80), the same for every database.
   */
  readonly port: number;
  readonly url: string;
}

/**
 * Runs instances somewhere (the `process` driver: child processes on this machine). Every
 * method is idempotent, so a reconciler that died half-way can repeat it.
 */
export interface Driver {
  readonly name: string;
  /**
   * Starts the instance's `launch.replicas` replicas, or finds them already running, and
   * resolves when every one listens.
   */
  start(launch: InstanceLaunch): Promise<InstanceHandle>;
  /**
   * Opens the database's endpoint (or finds it open) on `port`, or on a new port when null
   * (the first deploy); the caller records the port so the endpoint never moves.
   */
  openEndpoint(databaseId: string, port: number | null): Promise<Endpoint>;
  /**
   * Points the database's endpoint at a started instance: new requests go to it from now on,
   * requests already under way finish where they are.
   */
  route(databaseId: string, instanceId: string): Promise<void>;
  /** The endpoint stays but answers 503 with `message` (paused, terminated, …) until routed. */
  unroute(databaseId: string, message: string): Promise<void>;
  /** Closes the database's endpoint for good (the database is deleted). */
  closeEndpoint(databaseId: string): Promise<void>;
  /**
   * Removes the database's snapshot checkpoints (terminate, delete): the next deploy reads
   * the source. Redeploys, resizes, pauses and restarts keep them (docs/replication.md).
   */
  dropCheckpoints(databaseId: string): Promise<void>;
  /**
   * Stops and removes the instance; resolves once it is gone. It first stops accepting and
   * finishes the requests in flight (within a bound). Unknown ids are fine.
   */
  stop(instanceId: string): Promise<void>;
  /**
   * Whether the instance is alive (not whether it is healthy): every one of its replicas runs.
   * `start` again starts the replicas that do not, and adopts the rest.
   */
  isAlive(instanceId: string): Promise<boolean>;
  /** The instance's replicas by ordinal, as they are now; empty for an unknown id. */
  replicas(instanceId: string): Promise<ReplicaState[]>;
  /** Replaces the key ids the running instance accepts (it re-reads them within a second). */
  updateKeys(instanceId: string, keys: InstanceKeySet): Promise<void>;
  /** Recent log lines of the instance from `token` on (undefined: the last 200 lines). */
  readLogs(instanceId: string, token: string | undefined): Promise<LogChunk>;
  /**
   * Graceful control-plane exit: closes the endpoints and stops the instances this driver runs
   * (the reconciler opens the same endpoints and starts the instances again on the next start).
   * A control plane that crashes leaves them running instead, and the next one re-adopts them
   * (as a process driver told to keep them on stop does). Returns the ids it stopped.
   */
  shutdown(): Promise<string[]>;
  /**
   * Stops instances the store no longer has live (left by a control plane that crashed
   * mid-deploy). `liveInstanceIds` is asked after the driver has looked at what it runs, so an
   * instance recorded meanwhile is never taken for an orphan. Returns the ids it stopped.
   */
  reapOrphans?(liveInstanceIds: () => Promise<Iterable<string>>): Promise<string[]>;
}
