import type { InstanceKeySet } from './instance-key-set.ts';
import type { InstanceLaunch } from './instance-launch.ts';

/** A started instance, as the driver knows it. */
export interface InstanceHandle {
  readonly instanceId: string;
  readonly endpointUrl: string;
  /** Driver-specific reference (process: `process:<pid>`). */
  readonly containerRef: string;
  readonly port: number | null;
  readonly pid: number | null;
}

export interface LogChunk {
  readonly lines: Array<{ message: string; timestamp: number }>;
  /** Where the next read starts; pass it back. */
  readonly nextToken: string;
}

/**
 * Runs instances somewhere (the `process` driver: child processes on this machine). Every
 * method is idempotent, so a reconciler that died half-way can repeat it.
 */
export interface Driver {
  readonly name: string;
  /** Starts the instance, or finds it already running, and resolves when it listens. */
  start(launch: InstanceLaunch): Promise<InstanceHandle>;
  /** Stops and removes the instance; resolves once it is gone. Unknown ids are fine. */
  stop(instanceId: string): Promise<void>;
  /** Whether the instance's process/container is alive (not whether it is healthy). */
  isAlive(instanceId: string): Promise<boolean>;
  /** Replaces the key ids the running instance accepts (it re-reads them within a second). */
  updateKeys(instanceId: string, keys: InstanceKeySet): Promise<void>;
  /** Recent log lines of the instance from `token` on (undefined: the last 200 lines). */
  readLogs(instanceId: string, token: string | undefined): Promise<LogChunk>;
  /**
   * Graceful control-plane exit: stops the instances this driver runs (the reconciler starts
   * them again on the next start). A control plane that crashes leaves them running instead,
   * and the next one re-adopts them. Returns the ids it stopped.
   */
  shutdown(): Promise<string[]>;
  /**
   * Stops instances the store no longer has live (left by a control plane that crashed
   * mid-deploy). `liveInstanceIds` is asked after the driver has looked at what it runs, so an
   * instance recorded meanwhile is never taken for an orphan. Returns the ids it stopped.
   */
  reapOrphans?(liveInstanceIds: () => Promise<Iterable<string>>): Promise<string[]>;
}
