import type { Buffer } from 'node:buffer';
import { readFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join, resolve } from 'node:path';
import process from 'node:process';
import { parseSchemaConfig, type SchemaConfig } from '@replix/engine';
import { newKeyId, newKeySecret } from '@replix/instance-protocol';
import {
  ConfigError,
  decodeEnvironment,
  type Environment,
  hexKeyVariable,
  TRACING_VARIABLE_SCHEMAS,
  type TracingSettings,
  tracingSettingsFrom,
} from '@replix/runtime';
import { parseSourceUrl, schemaConfigWhereProblems } from '@replix/sources';
import { type StaticDecode, Type } from 'typebox';
import { keyIdListVariable } from './config/key-id-list-variable.ts';
import type { RateLimitPolicy } from './http/rate-limiter.ts';
import {
  type CheckpointSchedule,
  DEFAULT_CHECKPOINT_SCHEDULE,
} from './snapshot/checkpoint-schedule.ts';
import {
  type S3CheckpointSettings,
  s3CheckpointSettingsFromEnv,
} from './snapshot/s3-checkpoint-settings.ts';
import { sourceBuildHash } from './version.ts';

/**
 * The variables every instance reads, `replix serve` and an artifact alike
 * (docs/instance-api.md; docs/control-plane/builds.md, "Instance launch environment").
 */
export const INSTANCE_VARIABLE_SCHEMAS = {
  REPLIX_SOURCE_URL: Type.Optional(Type.String({ description: 'the source, with credentials' })),
  REPLIX_KEY_SECRET: Type.Optional(
    hexKeyVariable({
      problem: 'must be 64 hex digits (32 bytes)',
      description: "the database's key secret; API keys are HMACs under it",
    }),
  ),
  REPLIX_KEY_IDS: keyIdListVariable({
    problem: 'must list key ids of 16 lowercase hex digits',
    description: 'comma-separated query-key ids',
  }),
  REPLIX_ADMIN_KEY_IDS: keyIdListVariable({
    problem: 'must list key ids of 16 lowercase hex digits',
    description: 'comma-separated admin-key ids',
  }),
  REPLIX_LOG_LEVEL: Type.String({
    default: 'info',
    description: 'pino level; logs are JSON lines on stderr',
  }),
  REPLIX_THREADS: Type.Integer({
    minimum: 1,
    maximum: 256,
    default: 1,
    problem: 'must be a whole number of threads from 1 to 256',
    echo: true,
    description: "threads answering queries over one snapshot (the size's vCPUs)",
  }),
  REPLIX_RATE_LIMIT: Type.Integer({
    minimum: 0,
    maximum: 1_000_000,
    default: 0,
    problem: 'must be a whole number of requests from 0 (no limit) to 1000000',
    echo: true,
    description: 'requests each key may send to the query routes per window; 0: no limit',
  }),
  REPLIX_RATE_LIMIT_WINDOW: Type.Integer({
    minimum: 1,
    maximum: 3600,
    default: 1,
    problem: 'must be a whole number of seconds from 1 to 3600',
    echo: true,
    description: 'the rate limit window, in seconds',
  }),
  REPLIX_PORT_FILE: Type.Optional(
    Type.String({
      minLength: 1,
      problem: 'must be a file path',
      description: 'written with the port once listening (for --port 0)',
    }),
  ),
  REPLIX_CHECKPOINT_DIR: Type.Optional(
    Type.String({
      minLength: 1,
      problem: 'must be a folder path',
      description: "the folder of this database's checkpoints (docs/replication.md); unset: none",
    }),
  ),
  REPLIX_CHECKPOINT_INTERVAL: Type.Integer({
    minimum: 1,
    maximum: 86_400,
    default: DEFAULT_CHECKPOINT_SCHEDULE.intervalMs / 1000,
    problem: 'must be a whole number of seconds from 1 to 86400',
    echo: true,
    description: 'seconds after a checkpoint when the next is due, if anything changed',
  }),
  REPLIX_CHECKPOINT_CHANGES: Type.Integer({
    minimum: 1,
    maximum: 1_000_000_000,
    default: DEFAULT_CHECKPOINT_SCHEDULE.changes,
    problem: 'must be a whole number of row changes from 1 to 1000000000',
    echo: true,
    description: 'row changes after a checkpoint that make the next one due at once',
  }),
  REPLIX_CHECKPOINT_S3_BUCKET: Type.Optional(
    Type.String({ description: 'keep checkpoints in this S3 bucket (docs/replication.md)' }),
  ),
  REPLIX_CHECKPOINT_S3_PREFIX: Type.Optional(
    Type.String({ description: "the key prefix of this database's checkpoints in the bucket" }),
  ),
  REPLIX_CHECKPOINT_S3_ENDPOINT: Type.Optional(
    Type.String({ description: 'an S3-compatible endpoint (MinIO); unset: AWS' }),
  ),
  REPLIX_CHECKPOINT_S3_REGION: Type.Optional(Type.String({ description: "the bucket's region" })),
  REPLIX_CHECKPOINT_S3_PATH_STYLE: Type.Optional(
    Type.String({ description: '`true`: path-style addressing (most S3-compatible servers)' }),
  ),
  ...TRACING_VARIABLE_SCHEMAS,
};

/** An instance's spans are `replix-instance`'s unless `OTEL_SERVICE_NAME` says otherwise. */
export const INSTANCE_SERVICE_NAME = 'replix-instance';

/** `replix serve`'s variables (without `--artifact`). */
export const SERVE_VARIABLES = Type.Object(INSTANCE_VARIABLE_SCHEMAS);
export type InstanceVariables = StaticDecode<typeof SERVE_VARIABLES>;

/** Everything an instance runs on, resolved and validated once, whatever its origin. */
export interface InstanceConfig {
  readonly sourceUrl: string;
  readonly schemaConfig: SchemaConfig;
  readonly host: string;
  readonly port: number;
  readonly keySecret: Buffer;
  /** Ids of the query keys: they may query and read the schema. */
  readonly keyIds: readonly string[];
  /** Ids of the admin keys: they may also reload, pause replication, read metrics and detail. */
  readonly adminKeyIds: readonly string[];
  /**
   * True when the keys were made at start (nothing given): one query key (`keyIds[0]`) and one
   * admin key (`adminKeyIds[0]`), which `serve` prints.
   */
  readonly generatedKey: boolean;
  readonly buildHash: string;
  readonly logLevel: string;
  /**
   * `REPLIX_PORT_FILE`: the instance writes the port it listens on here once it listens, so a
   * supervisor can start it on `--port 0` and learn the port from the process that holds it.
   */
  readonly portFile?: string | undefined;
  /**
   * `REPLIX_THREADS` (`--threads`): threads answering queries, the main one included, over one
   * snapshot (`query-threads.ts`). The control plane's drivers pass the size's whole vCPUs.
   * Absent: 1.
   */
  readonly threads?: number | undefined;
  /**
   * `REPLIX_RATE_LIMIT` per `REPLIX_RATE_LIMIT_WINDOW` seconds: the requests each key may send
   * to the query routes (`rate-limiter.ts`). Absent: no limit.
   */
  readonly rateLimit?: RateLimitPolicy | undefined;
  /** Where its spans go (`OTEL_*`, docs/tracing.md); absent: tracing is off. */
  readonly tracing?: TracingSettings | undefined;
  /**
   * `REPLIX_CHECKPOINT_DIR` (`--checkpoint-dir`) and its schedule: where the snapshot is
   * checkpointed and started from (docs/replication.md). Absent: every start reads the source.
   */
  readonly checkpoints?: CheckpointSettings | undefined;
}

export interface CheckpointSettings {
  /** The local folder: the checkpoints themselves, or with `s3` the copies written and read. */
  readonly dir: string;
  readonly schedule: CheckpointSchedule;
  /** Where checkpoints are kept for any node to load (`REPLIX_CHECKPOINT_S3_*`), if anywhere. */
  readonly s3?: S3CheckpointSettings | undefined;
}

export interface InstanceConfigInput {
  readonly source?: string | undefined;
  readonly config?: string | undefined;
  readonly host?: string | undefined;
  readonly port?: string | number | undefined;
  readonly logLevel?: string | undefined;
  readonly threads?: string | number | undefined;
  readonly checkpointDir?: string | undefined;
}

function readSchemaConfigFile(path: string): SchemaConfig {
  let text: string;
  try {
    text = readFileSync(path, 'utf8');
  } catch {
    throw new ConfigError(`Cannot read the schema config file ${path}.`);
  }
  let parsed: unknown;
  try {
    parsed = JSON.parse(text);
  } catch (error) {
    throw new ConfigError(
      `The schema config file ${path} is not valid JSON: ${(error as Error).message}`,
    );
  }
  return parseSchemaConfig(parsed);
}

/**
 * A config file bypasses the control plane's checks, so its `where` predicates are checked here
 * too, in the source's dialect. An unusable source URL is left to the connector to report.
 */
function refuseUnsafeWheres(sourceUrl: string, config: SchemaConfig): void {
  let backend: ReturnType<typeof parseSourceUrl>['backend'];
  try {
    backend = parseSourceUrl(sourceUrl).backend;
  } catch {
    return;
  }
  const problems = schemaConfigWhereProblems(backend, config);
  if (problems.length > 0) {
    throw new ConfigError(
      `The schema config is invalid: ${problems.map((p) => `${p.path}: ${p.message}`).join('; ')}.`,
    );
  }
}

/** The `--port` flag: an integer from 0 (a free port) to 65535. */
export function listenPort(given: string | number | undefined): number {
  const port = Number(given ?? 0);
  if (!Number.isInteger(port) || port < 0 || port > 65535) {
    throw new ConfigError(`--port must be an integer from 0 to 65535, not ${given}.`);
  }
  return port;
}

/**
 * The instance's API key material: the secret with its query and admin key ids; or, when no
 * secret is given, a fresh secret with one query key and one admin key made at start.
 */
export function instanceKeys(
  variables: Pick<
    InstanceVariables,
    'REPLIX_KEY_SECRET' | 'REPLIX_KEY_IDS' | 'REPLIX_ADMIN_KEY_IDS'
  >,
): Pick<InstanceConfig, 'keySecret' | 'keyIds' | 'adminKeyIds' | 'generatedKey'> {
  if (!variables.REPLIX_KEY_SECRET) {
    return {
      keySecret: newKeySecret(),
      keyIds: [newKeyId()],
      adminKeyIds: [newKeyId()],
      generatedKey: true,
    };
  }
  return {
    keySecret: variables.REPLIX_KEY_SECRET,
    keyIds: variables.REPLIX_KEY_IDS,
    adminKeyIds: variables.REPLIX_ADMIN_KEY_IDS,
    generatedKey: false,
  };
}

/** The rate limit the variables set, or undefined for none. */
export function rateLimitOf(
  variables: Pick<InstanceVariables, 'REPLIX_RATE_LIMIT' | 'REPLIX_RATE_LIMIT_WINDOW'>,
): RateLimitPolicy | undefined {
  if (variables.REPLIX_RATE_LIMIT === 0) return undefined;
  return { quota: variables.REPLIX_RATE_LIMIT, windowSeconds: variables.REPLIX_RATE_LIMIT_WINDOW };
}

/** The checkpoint folder and schedule the variables set, or undefined for none. */
export function checkpointsOf(
  variables: Pick<
    InstanceVariables,
    | 'REPLIX_CHECKPOINT_DIR'
    | 'REPLIX_CHECKPOINT_INTERVAL'
    | 'REPLIX_CHECKPOINT_CHANGES'
    | `REPLIX_CHECKPOINT_S3_${'BUCKET' | 'PREFIX' | 'ENDPOINT' | 'REGION' | 'PATH_STYLE'}`
  >,
): CheckpointSettings | undefined {
  const s3 = s3CheckpointSettingsFromEnv({
    REPLIX_CHECKPOINT_S3_BUCKET: variables.REPLIX_CHECKPOINT_S3_BUCKET,
    REPLIX_CHECKPOINT_S3_PREFIX: variables.REPLIX_CHECKPOINT_S3_PREFIX,
    REPLIX_CHECKPOINT_S3_ENDPOINT: variables.REPLIX_CHECKPOINT_S3_ENDPOINT,
    REPLIX_CHECKPOINT_S3_REGION: variables.REPLIX_CHECKPOINT_S3_REGION,
    REPLIX_CHECKPOINT_S3_PATH_STYLE: variables.REPLIX_CHECKPOINT_S3_PATH_STYLE,
  });
  if (!variables.REPLIX_CHECKPOINT_DIR && !s3) return undefined;
  return {
    // With a bucket alone, a folder of this process stages what goes up and comes down.
    dir: variables.REPLIX_CHECKPOINT_DIR
      ? resolve(variables.REPLIX_CHECKPOINT_DIR)
      : join(tmpdir(), `replix-checkpoints-${process.pid}`),
    s3,
    schedule: {
      intervalMs: variables.REPLIX_CHECKPOINT_INTERVAL * 1000,
      changes: variables.REPLIX_CHECKPOINT_CHANGES,
    },
  };
}

/** The flags of `replix serve` that stand for a variable, laid over the environment. */
export function withFlags(
  env: Environment,
  flags: {
    readonly source?: string | undefined;
    readonly logLevel?: string | undefined;
    readonly threads?: string | number | undefined;
    readonly checkpointDir?: string | undefined;
  },
): Environment {
  return {
    ...env,
    ...(flags.checkpointDir !== undefined ? { REPLIX_CHECKPOINT_DIR: flags.checkpointDir } : {}),
    ...(flags.threads !== undefined ? { REPLIX_THREADS: String(flags.threads) } : {}),
    ...(flags.source !== undefined ? { REPLIX_SOURCE_URL: flags.source } : {}),
    ...(flags.logLevel !== undefined ? { REPLIX_LOG_LEVEL: flags.logLevel } : {}),
  };
}

/**
 * Resolves an instance's configuration from command-line flags and the environment:
 * `REPLIX_SOURCE_URL`, `REPLIX_KEY_SECRET` (64 hex digits), `REPLIX_KEY_IDS` and
 * `REPLIX_ADMIN_KEY_IDS` (comma-separated), `REPLIX_LOG_LEVEL`. Flags win over the environment.
 */
export function resolveInstanceConfig(
  input: InstanceConfigInput,
  env: Environment = process.env,
): InstanceConfig {
  const variables = decodeEnvironment(SERVE_VARIABLES, withFlags(env, input));
  const sourceUrl = variables.REPLIX_SOURCE_URL;
  if (!sourceUrl)
    throw new ConfigError(
      'A source is required: --source mysql://… or postgres://… (or REPLIX_SOURCE_URL).',
    );
  const port = listenPort(input.port);
  const schemaConfig = input.config ? readSchemaConfigFile(input.config) : parseSchemaConfig({});
  refuseUnsafeWheres(sourceUrl, schemaConfig);
  return Object.freeze({
    sourceUrl,
    schemaConfig,
    host: input.host ?? '127.0.0.1',
    port,
    ...instanceKeys(variables),
    buildHash: sourceBuildHash(),
    logLevel: variables.REPLIX_LOG_LEVEL,
    portFile: variables.REPLIX_PORT_FILE,
    threads: variables.REPLIX_THREADS,
    rateLimit: rateLimitOf(variables),
    tracing: tracingSettingsFrom(variables, INSTANCE_SERVICE_NAME),
    checkpoints: checkpointsOf(variables),
  });
}
