import { readFileSync } from 'node:fs';
import { join } from 'node:path';
import { parseSchemaConfig, type SchemaConfig } from '@replix/engine';
import { ARTIFACT_FILES, type ArtifactManifest } from '@replix/instance-protocol';
import {
  ConfigError,
  decodeEnvironment,
  type Environment,
  flagVariable,
  tracingSettingsFrom,
} from '@replix/runtime';
import { type StaticDecode, Type } from 'typebox';
import {
  checkpointsOf,
  INSTANCE_SERVICE_NAME,
  INSTANCE_VARIABLE_SCHEMAS,
  type InstanceConfig,
  instanceKeys,
  listenPort,
  rateLimitOf,
  withFlags,
} from './instance-config.ts';

/**
 * The launch environment of an artifact's instance: the variables of every instance and those
 * the control plane's drivers add (docs/control-plane/builds.md, "Instance launch environment").
 */
export const ARTIFACT_VARIABLES = Type.Object({
  ...INSTANCE_VARIABLE_SCHEMAS,
  REPLIX_KEYS_FILE: Type.Optional(
    Type.String({
      description: 'the keys file, re-read while running',
    }),
  ),
  REPLIX_REPLICATION_ID: Type.Optional(
    Type.String({
      pattern: '^[a-z0-9_]{1,56}$',
      problem: 'must be 1 to 56 lowercase letters, digits or underscores',
      description: 'names the source-side replication state',
    }),
  ),
  REPLIX_FOLLOW_URL: Type.Optional(
    Type.String({
      pattern: '^https?://[^\\s]+$',
      problem: 'must be an http:// URL',
      description:
        "a follower replica: the leader replica's private address, whose feed it follows",
    }),
  ),
  REPLIX_CHANGE_FEED: flagVariable({
    problem: 'must be 0 or 1',
    echo: true,
    description: 'a leader replica: keep the change feed its followers read',
  }),
  REPLIX_REPLICATION_PAUSED: flagVariable({
    problem: 'must be 0 or 1',
    echo: true,
    description: 'start with replication paused',
  }),
  REPLIX_SYNC_MODE: Type.Optional(
    Type.Union([Type.Literal('cdc'), Type.Literal('poll')], {
      problem: 'must be cdc or poll',
      echo: true,
      description: "overrides the artifact's sync.mode",
    }),
  ),
  REPLIX_SYNC_INTERVAL: Type.Optional(
    Type.Number({
      exclusiveMinimum: 0,
      problem: 'must be a positive number of seconds',
      echo: true,
      description: "overrides the artifact's sync.interval",
    }),
  ),
  REPLIX_SAFETY_NET: Type.Optional(
    Type.Number({
      minimum: 0,
      problem: 'must be a number of seconds >= 0',
      echo: true,
      description: "overrides the artifact's sync.safety_net",
    }),
  ),
  REPLIX_MEMORY_CAP_MB: Type.Optional(
    Type.Number({
      exclusiveMinimum: 0,
      problem: 'must be a positive number of MB',
      echo: true,
      description: "the task's memory: caps the snapshot's memory_cap_mb",
    }),
  ),
  REPLIX_QUERY_TIMEOUT_MAX_MS: Type.Optional(
    Type.Integer({
      minimum: 10,
      problem: 'must be an integer number of milliseconds >= 10',
      echo: true,
      description: "the instance size's longest query: caps query.timeout_ms",
    }),
  ),
  REPLIX_SSH_HOST: Type.Optional(
    Type.String({ description: 'open an SSH tunnel through this host' }),
  ),
  REPLIX_SSH_PORT: Type.Integer({
    minimum: 1,
    maximum: 65535,
    default: 22,
    problem: 'must be a port number',
    echo: true,
    description: "the SSH tunnel's port",
  }),
  REPLIX_SSH_USER: Type.Optional(Type.String({ description: "the SSH tunnel's user" })),
  REPLIX_SSH_PRIVATE_KEY: Type.Optional(
    Type.String({ description: "the SSH tunnel's private key" }),
  ),
});
export type ArtifactVariables = StaticDecode<typeof ARTIFACT_VARIABLES>;

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
  /** `REPLIX_FOLLOW_URL`: follow this leader replica instead of the source. */
  readonly followUrl: string | undefined;
  /** `REPLIX_CHANGE_FEED`: keep a change feed for follower replicas. */
  readonly changeFeed: boolean;
  readonly ssh: ArtifactSshSettings | undefined;
}

export interface ArtifactFlags {
  readonly source?: string | undefined;
  readonly host?: string | undefined;
  readonly port?: string | number | undefined;
  readonly logLevel?: string | undefined;
  readonly threads?: string | number | undefined;
  readonly checkpointDir?: string | undefined;
}

function readArtifactJson(artifactDir: string, file: string): unknown {
  let text: string;
  try {
    text = readFileSync(join(artifactDir, file), 'utf8');
  } catch {
    throw new ConfigError(`${artifactDir} is not a build artifact: it has no readable ${file}.`);
  }
  try {
    return JSON.parse(text);
  } catch {
    throw new ConfigError(`The artifact's ${file} is not valid JSON.`);
  }
}

/**
 * The artifact's schema config with the launch environment's overrides: `REPLIX_SYNC_MODE`,
 * `REPLIX_SYNC_INTERVAL` and `REPLIX_SAFETY_NET` replace the sync settings baked in at build
 * time (so a reconfigure needs no rebuild); `REPLIX_QUERY_TIMEOUT_MAX_MS` (the instance size's longest query) caps
 * `query.timeout_ms`; `REPLIX_MEMORY_CAP_MB` (the task's memory) caps the
 * snapshot, keeping a smaller cap the config already had.
 */
export function applyLaunchOverrides(
  config: SchemaConfig,
  variables: Pick<
    ArtifactVariables,
    | 'REPLIX_SYNC_MODE'
    | 'REPLIX_SYNC_INTERVAL'
    | 'REPLIX_SAFETY_NET'
    | 'REPLIX_MEMORY_CAP_MB'
    | 'REPLIX_QUERY_TIMEOUT_MAX_MS'
  >,
): SchemaConfig {
  const mode = variables.REPLIX_SYNC_MODE;
  const interval = variables.REPLIX_SYNC_INTERVAL;
  const safetyNet = variables.REPLIX_SAFETY_NET;
  const memoryCap = variables.REPLIX_MEMORY_CAP_MB;
  const timeoutCap = variables.REPLIX_QUERY_TIMEOUT_MAX_MS;
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

function sshSettings(variables: ArtifactVariables): ArtifactSshSettings | undefined {
  if (!variables.REPLIX_SSH_HOST) return undefined;
  if (!variables.REPLIX_SSH_USER || !variables.REPLIX_SSH_PRIVATE_KEY) {
    throw new ConfigError(
      'REPLIX_SSH_HOST needs REPLIX_SSH_USER and REPLIX_SSH_PRIVATE_KEY as well.',
    );
  }
  return {
    host: variables.REPLIX_SSH_HOST,
    port: variables.REPLIX_SSH_PORT,
    user: variables.REPLIX_SSH_USER,
    privateKey: variables.REPLIX_SSH_PRIVATE_KEY,
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
  env: Environment,
): ArtifactLaunchConfig {
  const manifest = readArtifactJson(artifactDir, ARTIFACT_FILES.manifest) as ArtifactManifest;
  if (typeof manifest?.buildHash !== 'string' || !/^[0-9a-f]{12}$/.test(manifest.buildHash)) {
    throw new ConfigError("The artifact's manifest.json has no valid buildHash.");
  }
  const variables = decodeEnvironment(ARTIFACT_VARIABLES, withFlags(env, flags));
  const sourceUrl = variables.REPLIX_SOURCE_URL;
  if (!sourceUrl) {
    throw new ConfigError('A source is required: REPLIX_SOURCE_URL (or --source).');
  }
  const schemaConfig = applyLaunchOverrides(
    parseSchemaConfig(readArtifactJson(artifactDir, ARTIFACT_FILES.schemaConfig)),
    variables,
  );
  return Object.freeze({
    instance: Object.freeze({
      sourceUrl,
      schemaConfig,
      host: flags.host ?? '127.0.0.1',
      port: listenPort(flags.port),
      ...instanceKeys(variables),
      buildHash: manifest.buildHash,
      logLevel: variables.REPLIX_LOG_LEVEL,
      portFile: variables.REPLIX_PORT_FILE,
      threads: variables.REPLIX_THREADS,
      rateLimit: rateLimitOf(variables),
      tracing: tracingSettingsFrom(variables, INSTANCE_SERVICE_NAME),
      checkpoints: checkpointsOf(variables),
    }),
    manifest,
    keysFile: variables.REPLIX_KEYS_FILE,
    replicationId: variables.REPLIX_REPLICATION_ID,
    replicationPaused: variables.REPLIX_REPLICATION_PAUSED,
    followUrl: variables.REPLIX_FOLLOW_URL,
    changeFeed: variables.REPLIX_CHANGE_FEED,
    ssh: sshSettings(variables),
  });
}
