import { type TracingSettings, tracingEnvironment } from '@replix/runtime';
import { INSTANCE_MALLOC_ENVIRONMENT } from './launch-memory.ts';

/**
 * What an instance is launched with by a driver (`replix serve --artifact`), in the control
 * plane's terms; `launchVariables` writes it as the environment the instance program decodes
 * (docs/control-plane/builds.md, "Instance launch environment").
 */
export interface LaunchVariables {
  /** The source URL with its credentials: in the environment, never on a command line. */
  readonly sourceUrl: string;
  /** The key secret (32 bytes, hex) the instance's API keys are derived under. */
  readonly keySecretHex: string;
  readonly keyIds: readonly string[];
  readonly adminKeyIds: readonly string[];
  /** The keys file the instance re-reads while running. */
  readonly keysFile: string;
  /** Names the source-side replication state. */
  readonly replicationId: string;
  readonly replicationPaused: boolean;
  readonly logLevel: string;
  readonly syncMode: string;
  readonly syncInterval: number;
  readonly safetyNet: number;
  /** The task's memory: caps the snapshot's `memory_cap_mb`. */
  readonly memoryCapMb: number;
  /** The instance size's longest query: caps `query.timeout_ms`. */
  readonly queryTimeoutMaxMs: number;
  readonly threads: number;
  /** Requests per window each key may send to the query routes; absent: no limit. */
  readonly rateLimit?: { readonly quota: number; readonly windowSeconds: number } | undefined;
  /** An SSH tunnel to open to the source. */
  readonly ssh?:
    | {
        readonly host: string;
        readonly port: number;
        readonly user: string;
        readonly privateKey: string;
      }
    | undefined;
  /** Where the instance sends its spans: the control plane's collector. */
  readonly tracing?: TracingSettings | undefined;
}

/** The launch environment of an instance: its variables, its tracing's and its C library's. */
export function launchVariables(launch: LaunchVariables): Record<string, string> {
  const env: Record<string, string> = {
    REPLIX_SOURCE_URL: launch.sourceUrl,
    REPLIX_KEY_SECRET: launch.keySecretHex,
    REPLIX_KEY_IDS: launch.keyIds.join(','),
    REPLIX_ADMIN_KEY_IDS: launch.adminKeyIds.join(','),
    REPLIX_KEYS_FILE: launch.keysFile,
    REPLIX_REPLICATION_ID: launch.replicationId,
    REPLIX_LOG_LEVEL: launch.logLevel,
    REPLIX_SYNC_MODE: launch.syncMode,
    REPLIX_SYNC_INTERVAL: String(launch.syncInterval),
    REPLIX_SAFETY_NET: String(launch.safetyNet),
    REPLIX_MEMORY_CAP_MB: String(launch.memoryCapMb),
    REPLIX_QUERY_TIMEOUT_MAX_MS: String(launch.queryTimeoutMaxMs),
    REPLIX_THREADS: String(launch.threads),
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
