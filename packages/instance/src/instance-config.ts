import { readFileSync } from 'node:fs';
import { parseSchemaConfig, type SchemaConfig } from '@replix/engine';
import { parseSourceUrl, schemaConfigWhereProblems } from '@replix/sources';
import { newKeyId, newKeySecret } from './api-keys.ts';
import { sourceBuildHash } from './version.ts';

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
}

export interface InstanceConfigInput {
  readonly source?: string | undefined;
  readonly config?: string | undefined;
  readonly host?: string | undefined;
  readonly port?: string | number | undefined;
  readonly logLevel?: string | undefined;
}

export class InstanceConfigError extends Error {
  constructor(message: string) {
    super(message);
    this.name = 'InstanceConfigError';
  }
}

function readSchemaConfigFile(path: string): SchemaConfig {
  let text: string;
  try {
    text = readFileSync(path, 'utf8');
  } catch {
    throw new InstanceConfigError(`Cannot read the schema config file ${path}.`);
  }
  let parsed: unknown;
  try {
    parsed = JSON.parse(text);
  } catch (error) {
    throw new InstanceConfigError(
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
  let engine: ReturnType<typeof parseSourceUrl>['engine'];
  try {
    engine = parseSourceUrl(sourceUrl).engine;
  } catch {
    return;
  }
  const problems = schemaConfigWhereProblems(engine, config);
  if (problems.length > 0) {
    throw new InstanceConfigError(
      `The schema config is invalid: ${problems.map((p) => `${p.path}: ${p.message}`).join('; ')}.`,
    );
  }
}

/** The `--port` flag: an integer from 0 (a free port) to 65535. */
export function listenPort(given: string | number | undefined): number {
  const port = Number(given ?? 0);
  if (!Number.isInteger(port) || port < 0 || port > 65535) {
    throw new InstanceConfigError(`--port must be an integer from 0 to 65535, not ${given}.`);
  }
  return port;
}

/** The key id pattern of `api-keys.ts`: 16 lowercase hex digits. */
export const KEY_ID_PATTERN = /^[0-9a-f]{16}$/;

function keyIdList(env: NodeJS.ProcessEnv, name: string): string[] {
  const keyIds = (env[name] ?? '')
    .split(',')
    .map((id) => id.trim())
    .filter(Boolean);
  if (keyIds.some((id) => !KEY_ID_PATTERN.test(id))) {
    throw new InstanceConfigError(`${name} must list key ids of 16 lowercase hex digits.`);
  }
  return keyIds;
}

/**
 * The instance's API key material: `REPLIX_KEY_SECRET` (64 hex digits), `REPLIX_KEY_IDS` (query
 * keys) and `REPLIX_ADMIN_KEY_IDS` (admin keys), both comma-separated; or, when no secret is
 * given, a fresh secret with one query key and one admin key made at start.
 */
export function keysFromEnvironment(
  env: NodeJS.ProcessEnv,
): Pick<InstanceConfig, 'keySecret' | 'keyIds' | 'adminKeyIds' | 'generatedKey'> {
  if (!env.REPLIX_KEY_SECRET) {
    return {
      keySecret: newKeySecret(),
      keyIds: [newKeyId()],
      adminKeyIds: [newKeyId()],
      generatedKey: true,
    };
  }
  if (!/^[0-9a-f]{64}$/i.test(env.REPLIX_KEY_SECRET)) {
    throw new InstanceConfigError('REPLIX_KEY_SECRET must be 64 hex digits (32 bytes).');
  }
  return {
    keySecret: Buffer.from(env.REPLIX_KEY_SECRET, 'hex'),
    keyIds: keyIdList(env, 'REPLIX_KEY_IDS'),
    adminKeyIds: keyIdList(env, 'REPLIX_ADMIN_KEY_IDS'),
    generatedKey: false,
  };
}

/**
 * Resolves an instance's configuration from command-line flags and the environment:
 * `REPLIX_SOURCE_URL`, `REPLIX_KEY_SECRET` (64 hex digits), `REPLIX_KEY_IDS` and
 * `REPLIX_ADMIN_KEY_IDS` (comma-separated), `REPLIX_LOG_LEVEL`. Flags win over the environment.
 */
export function resolveInstanceConfig(
  input: InstanceConfigInput,
  env: NodeJS.ProcessEnv = process.env,
): InstanceConfig {
  const sourceUrl = input.source ?? env.REPLIX_SOURCE_URL;
  if (!sourceUrl)
    throw new InstanceConfigError(
      'A source is required: --source mysql://… or postgres://… (or REPLIX_SOURCE_URL).',
    );
  const port = listenPort(input.port);
  const schemaConfig = input.config ? readSchemaConfigFile(input.config) : parseSchemaConfig({});
  refuseUnsafeWheres(sourceUrl, schemaConfig);
  return {
    sourceUrl,
    schemaConfig,
    host: input.host ?? '127.0.0.1',
    port,
    ...keysFromEnvironment(env),
    buildHash: sourceBuildHash(),
    logLevel: input.logLevel ?? env.REPLIX_LOG_LEVEL ?? 'info',
  };
}
