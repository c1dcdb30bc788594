import { readFileSync } from 'node:fs';
import { join } from 'node:path';
import { parseSchemaConfig, type SchemaConfig } from '@replix/engine';
import { ARTIFACT_FILES, type ArtifactManifest } from './artifact-manifest.ts';
import {
  type InstanceConfig,
  InstanceConfigError,
  keysFromEnvironment,
  listenPort,
} from './instance-config.ts';

/** An SSH tunnel to open before connecting to the source (`REPLIX_SSH_*`). */
export interface ArtifactSshSettings {
  readonly host: string;
  readonly port: number;
  readonly user: string;
  readonly privateKey: string;
}

/** Everything `replix serve --artifact` runs on, resolved from the artifact and the environment. */
export interface ArtifactLaunchConfig {
  readonly instance: InstanceConfig;
  readonly manifest: ArtifactManifest;
  /**
   * `REPLIX_KEYS_FILE`: re-read while running; it replaces `REPLIX_KEY_IDS` and
   * `REPLIX_ADMIN_KEY_IDS`.
   */
  readonly keysFile: string | undefined;
  readonly replicationId: string | undefined;
  readonly replicationPaused: boolean;
  readonly ssh: ArtifactSshSettings | undefined;
}

export interface ArtifactFlags {
  readonly source?: string | undefined;
  readonly host?: string | undefined;
  readonly port?: string | number | undefined;
  readonly logLevel?: string | undefined;
}

function readArtifactJson(artifactDir: string, file: string): unknown {
  let text: string;
  try {
    text = readFileSync(join(artifactDir, file), 'utf8');
  } catch {
    throw new InstanceConfigError(
      `${artifactDir} is not a build artifact: it has no readable ${file}.`,
    );
  }
  try {
    return JSON.parse(text);
  } catch {
    throw new InstanceConfigError(`The artifact's ${file} is not valid JSON.`);
  }
}

function numberFromEnv(
  env: NodeJS.ProcessEnv,
  name: string,
  valid: (value: number) => boolean,
  rule: string,
): number | undefined {
  const text = env[name];
  if (text === undefined || text === '') return undefined;
  const value = Number(text);
  if (!Number.isFinite(value) || !valid(value)) {
    throw new InstanceConfigError(`${name} must be ${rule}, not "${text}".`);
  }
  return value;
}

/**
 * The artifact's schema config with the launch environment's overrides: `REPLIX_SYNC_MODE`,
 * `REPLIX_SYNC_INTERVAL` and `REPLIX_SAFETY_NET` replace the sync settings baked in at build
 * time (so a reconfigure needs no rebuild); `REPLIX_QUERY_TIMEOUT_MAX_MS` (the instance size's longest query) caps
 * `query.timeout_ms`; `REPLIX_MEMORY_CAP_MB` (the task's memory) caps the
 * snapshot, keeping a smaller cap the config already had.
 */
export function applyLaunchOverrides(config: SchemaConfig, env: NodeJS.ProcessEnv): SchemaConfig {
  const mode = env.REPLIX_SYNC_MODE || undefined;
  if (mode !== undefined && mode !== 'cdc' && mode !== 'poll') {
    throw new InstanceConfigError(`REPLIX_SYNC_MODE must be cdc or poll, not "${mode}".`);
  }
  const interval = numberFromEnv(
    env,
    'REPLIX_SYNC_INTERVAL',
    (v) => v > 0,
    'a positive number of seconds',
  );
  const safetyNet = numberFromEnv(
    env,
    'REPLIX_SAFETY_NET',
    (v) => v >= 0,
    'a number of seconds >= 0',
  );
  const memoryCap = numberFromEnv(
    env,
    'REPLIX_MEMORY_CAP_MB',
    (v) => v > 0,
    'a positive number of MB',
  );
  const timeoutCap = numberFromEnv(
    env,
    'REPLIX_QUERY_TIMEOUT_MAX_MS',
    (v) => Number.isInteger(v) && v >= 10,
    'an integer number of milliseconds >= 10',
  );
  return parseSchemaConfig({
    ...config,
    query: {
      ...config.query,
      ...(timeoutCap !== undefined
        ? { timeout_ms: Math.min(timeoutCap, config.query.timeout_ms) }
        : {}),
    },
    sync: {
      ...config.sync,
      ...(mode ? { mode } : {}),
      ...(interval !== undefined ? { interval } : {}),
      ...(safetyNet !== undefined ? { safety_net: safetyNet } : {}),
    },
    memory_cap_mb:
      memoryCap === undefined
        ? config.memory_cap_mb
        : Math.min(memoryCap, config.memory_cap_mb ?? Number.POSITIVE_INFINITY),
  });
}

function sshFromEnv(env: NodeJS.ProcessEnv): ArtifactSshSettings | undefined {
  if (!env.REPLIX_SSH_HOST) return undefined;
  const port = numberFromEnv(
    env,
    'REPLIX_SSH_PORT',
    (v) => Number.isInteger(v) && v > 0 && v < 65536,
    'a port number',
  );
  if (!env.REPLIX_SSH_USER || !env.REPLIX_SSH_PRIVATE_KEY) {
    throw new InstanceConfigError(
      'REPLIX_SSH_HOST needs REPLIX_SSH_USER and REPLIX_SSH_PRIVATE_KEY as well.',
    );
  }
  return {
    host: env.REPLIX_SSH_HOST,
    port: port ?? 22,
    user: env.REPLIX_SSH_USER,
    privateKey: env.REPLIX_SSH_PRIVATE_KEY,
  };
}

/**
 * Resolves `replix serve --artifact <dir>`: the artifact's manifest and schema config, and the
 * launch environment of the control plane's drivers (docs/control-plane/builds.md, "Instance
 * launch environment"). Flags win over the environment.
 */
export function resolveArtifactConfig(
  artifactDir: string,
  flags: ArtifactFlags,
  env: NodeJS.ProcessEnv,
): ArtifactLaunchConfig {
  const manifest = readArtifactJson(artifactDir, ARTIFACT_FILES.manifest) as ArtifactManifest;
  if (typeof manifest?.buildHash !== 'string' || !/^[0-9a-f]{12}$/.test(manifest.buildHash)) {
    throw new InstanceConfigError("The artifact's manifest.json has no valid buildHash.");
  }
  const sourceUrl = flags.source ?? env.REPLIX_SOURCE_URL;
  if (!sourceUrl) {
    throw new InstanceConfigError('A source is required: REPLIX_SOURCE_URL (or --source).');
  }
  const schemaConfig = applyLaunchOverrides(
    parseSchemaConfig(readArtifactJson(artifactDir, ARTIFACT_FILES.schemaConfig)),
    env,
  );
  const paused = env.REPLIX_REPLICATION_PAUSED ?? '0';
  if (!['0', '1', 'true', 'false', ''].includes(paused)) {
    throw new InstanceConfigError(`REPLIX_REPLICATION_PAUSED must be 0 or 1, not "${paused}".`);
  }
  const replicationId = env.REPLIX_REPLICATION_ID || undefined;
  if (replicationId !== undefined && !/^[a-z0-9_]{1,56}$/.test(replicationId)) {
    throw new InstanceConfigError(
      'REPLIX_REPLICATION_ID must be 1 to 56 lowercase letters, digits or underscores.',
    );
  }
  return {
    instance: {
      sourceUrl,
      schemaConfig,
      host: flags.host ?? '127.0.0.1',
      port: listenPort(flags.port),
      ...keysFromEnvironment(env),
      buildHash: manifest.buildHash,
      logLevel: flags.logLevel ?? env.REPLIX_LOG_LEVEL ?? 'info',
    },
    manifest,
    keysFile: env.REPLIX_KEYS_FILE || undefined,
    replicationId,
    replicationPaused: paused === '1' || paused === 'true',
    ssh: sshFromEnv(env),
  };
}
