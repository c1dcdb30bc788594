import { launchVariables } from '@replix/instance-protocol';
import type { TracingSettings } from '@replix/runtime';
import { INSTANCE_SIZES, type InstanceSize } from '../../domain/plans.ts';
import type { DeployedInstanceConfig } from '../store/schema.ts';
import type { InstanceKeySet } from './instance-key-set.ts';

/** An SSH tunnel the instance opens to reach its source. */
export interface SshTunnelLaunch {
  readonly host: string;
  readonly port: number;
  readonly user: string;
  readonly privateKey: string;
}

/** Everything a driver needs to start one instance of a database from a build's artifact. */
export interface InstanceLaunch {
  readonly instanceId: string;
  readonly databaseId: string;
  readonly buildId: string;
  /** The build's artifact folder (`replix serve --artifact <dir>`). */
  readonly artifactDir: string;
  /** The source URL with its credentials; passed in the environment, never on a command line. */
  readonly sourceUrl: string;
  readonly ssh: SshTunnelLaunch | undefined;
  /** The database's instance key secret (32 bytes hex); API keys are derived from it. */
  readonly keySecretHex: string;
  /** Key ids the instance accepts at start, by scope (the control plane's own key is admin). */
  readonly keys: InstanceKeySet;
  /**
   * Names the source-side replication state (PostgreSQL slot and publication) of replica 0;
   * replica k follows the source under `replicaReplicationId(replicationId, k)`.
   */
  readonly replicationId: string;
  /** How many replicas serve the instance (read replicas), each following the source itself; ≥ 1. */
  readonly replicas: number;
  readonly settings: DeployedInstanceConfig;
  readonly replicationPaused: boolean;
  /** Requests per window each key may send to the query routes (the plan's); absent: none. */
  readonly rateLimit?: { readonly quota: number; readonly windowSeconds: number } | undefined;
  /** The control plane's tracing: the instance sends its spans to the same collector. */
  readonly tracing?: TracingSettings | undefined;
}

/** The longest a query may run on an instance of `size` (the smallest size's when unknown). */
function maxQueryMsOf(size: string): number {
  return (INSTANCE_SIZES[size as InstanceSize] ?? INSTANCE_SIZES.xs).maxQueryMs;
}

/** Query threads for a task of `taskCpu` vCPUs: one per whole vCPU, at least one. */
export function queryThreadsOf(taskCpu: number): number {
  return Math.max(1, Math.floor(taskCpu));
}

/**
 * The environment of `replix serve --artifact` for `launch`: the contract between drivers and
 * the instance program, written by `@replix/instance-protocol` (docs/control-plane/builds.md).
 */
export function launchEnvironment(
  launch: InstanceLaunch,
  keysFile: string,
): Record<string, string> {
  return launchVariables({
    sourceUrl: launch.sourceUrl,
    keySecretHex: launch.keySecretHex,
    keyIds: launch.keys.keyIds,
    adminKeyIds: launch.keys.adminKeyIds,
    keysFile,
    replicationId: launch.replicationId,
    replicationPaused: launch.replicationPaused,
    logLevel: launch.settings.logLevel,
    syncMode: launch.settings.syncMode,
    syncInterval: launch.settings.syncInterval,
    safetyNet: launch.settings.safetyNet,
    memoryCapMb: launch.settings.taskMemoryMb,
    queryTimeoutMaxMs: maxQueryMsOf(launch.settings.instanceSize),
    threads: queryThreadsOf(launch.settings.taskCpu),
    rateLimit: launch.rateLimit,
    ssh: launch.ssh,
    tracing: launch.tracing,
  });
}
