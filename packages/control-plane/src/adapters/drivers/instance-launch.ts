import { INSTANCE_MALLOC_ENVIRONMENT } from '@replix/instance-protocol';
import { type TracingSettings, tracingEnvironment } from '@replix/runtime';
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
 * The environment of `replix serve --artifact`: the contract between drivers and the instance
 * program (docs/control-plane/builds.md).
 */
export function launchEnvironment(
  launch: InstanceLaunch,
  keysFile: string,
): Record<string, string> {
  const env: Record<string, string> = {
    REPLIX_SOURCE_URL: launch.sourceUrl,
    REPLIX_KEY_SECRET: launch.keySecretHex,
    REPLIX_KEY_IDS: launch.keys.keyIds.join(','),
    REPLIX_ADMIN_KEY_IDS: launch.keys.adminKeyIds.join(','),
    REPLIX_KEYS_FILE: keysFile,
    REPLIX_REPLICATION_ID: launch.replicationId,
    REPLIX_LOG_LEVEL: launch.settings.logLevel,
    REPLIX_SYNC_MODE: launch.settings.syncMode,
    REPLIX_SYNC_INTERVAL: String(launch.settings.syncInterval),
    REPLIX_SAFETY_NET: String(launch.settings.safetyNet),
    REPLIX_MEMORY_CAP_MB: String(launch.settings.taskMemoryMb),
    REPLIX_QUERY_TIMEOUT_MAX_MS: String(maxQueryMsOf(launch.settings.instanceSize)),
    REPLIX_THREADS: String(queryThreadsOf(launch.settings.taskCpu)),
    REPLIX_REPLICATION_PAUSED: launch.replicationPaused ? '1' : '0',
    ...tracingEnvironment(launch.tracing),
    ...INSTANCE_MALLOC_ENVIRONMENT,
  };
  if (launch.rateLimit) {
    env.REPLIX_RATE_LIMIT = String(launch.rateLimit.quota);
    env.REPLIX_RATE_LIMIT_WINDOW = String(launch.rateLimit.windowSeconds);
  }
  if (launch.ssh) {
    env.REPLIX_SSH_HOST = launch.ssh.host;
    env.REPLIX_SSH_PORT = String(launch.ssh.port);
    env.REPLIX_SSH_USER = launch.ssh.user;
    env.REPLIX_SSH_PRIVATE_KEY = launch.ssh.privateKey;
  }
  return env;
}
