import { ConfigError } from '@replix/runtime';

/**
 * Where the checkpoints live in S3 and how to reach the bucket: read from the launch
 * environment here, apart from the S3 client, so that reading them loads no SDK.
 */
export interface S3CheckpointSettings {
  readonly bucket: string;
  /** Key prefix, e.g. `replix/db_123/`; '' for the bucket's root. */
  readonly prefix: string;
  /** An S3-compatible endpoint (MinIO, s3rver); undefined for AWS. */
  readonly endpoint?: string;
  readonly region?: string;
  /** Path-style addressing (needed by most S3-compatible servers). */
  readonly forcePathStyle?: boolean;
  /**
   * Explicit credentials; default: the AWS SDK's default provider chain (env
   * AWS_ACCESS_KEY_ID/AWS_SECRET_ACCESS_KEY, as a Kubernetes Secret reference sets them).
   */
  readonly credentials?: { readonly accessKeyId: string; readonly secretAccessKey: string };
}

const VALID_BUCKET = /^[a-z0-9][a-z0-9.-]{1,61}[a-z0-9]$/;

/** How a settings check names each setting: the field, or the variable it was read from. */
type SettingNames = Readonly<Record<'bucket' | 'prefix' | 'endpoint', string>>;

const FIELD_NAMES: SettingNames = {
  bucket: 'The S3 checkpoint bucket',
  prefix: 'The S3 checkpoint prefix',
  endpoint: 'The S3 checkpoint endpoint',
};

/** Throws `ConfigError` unless the settings can address a bucket. */
function checkSettings(settings: S3CheckpointSettings, names: SettingNames): void {
  const { bucket, prefix, endpoint } = settings;
  if (!VALID_BUCKET.test(bucket) || bucket.includes('..')) {
    throw new ConfigError(
      `${names.bucket} ${JSON.stringify(bucket)} is not a valid S3 bucket name: 3-63 lowercase letters, digits, '.' and '-', starting and ending with a letter or digit.`,
    );
  }
  if (prefix.startsWith('/')) {
    throw new ConfigError(`${names.prefix} must not start with '/' (S3 keys have no root).`);
  }
  if (endpoint !== undefined && !isHttpUrl(endpoint)) {
    // The value itself is not repeated: a URL can carry credentials.
    throw new ConfigError(`${names.endpoint} must be an http:// or https:// URL.`);
  }
}

function isHttpUrl(text: string): boolean {
  try {
    const { protocol } = new URL(text);
    return protocol === 'http:' || protocol === 'https:';
  } catch {
    return false;
  }
}

/** Throws `ConfigError` unless the settings can address a bucket. */
export function checkS3Settings(settings: S3CheckpointSettings): void {
  checkSettings(settings, FIELD_NAMES);
}

const VARIABLES = {
  bucket: 'REPLIX_CHECKPOINT_S3_BUCKET',
  prefix: 'REPLIX_CHECKPOINT_S3_PREFIX',
  endpoint: 'REPLIX_CHECKPOINT_S3_ENDPOINT',
  region: 'REPLIX_CHECKPOINT_S3_REGION',
  pathStyle: 'REPLIX_CHECKPOINT_S3_PATH_STYLE',
} as const;

/** A variable's value, an empty one counting as unset (as a blank Kubernetes value is). */
function variable(env: NodeJS.ProcessEnv, name: string): string | undefined {
  const value = env[name];
  return value === '' ? undefined : value;
}

function pathStyleFrom(env: NodeJS.ProcessEnv): boolean | undefined {
  const value = variable(env, VARIABLES.pathStyle);
  if (value === undefined) return undefined;
  if (value === 'true' || value === 'false') return value === 'true';
  throw new ConfigError(
    `${VARIABLES.pathStyle} must be 'true' or 'false'; got ${JSON.stringify(value)}.`,
  );
}

/**
 * Reads settings from environment variables REPLIX_CHECKPOINT_S3_BUCKET (required to enable),
 * REPLIX_CHECKPOINT_S3_PREFIX, REPLIX_CHECKPOINT_S3_ENDPOINT, REPLIX_CHECKPOINT_S3_REGION (default
 * 'us-east-1'), REPLIX_CHECKPOINT_S3_PATH_STYLE ('true'/'false'); undefined when no bucket is set.
 * Throws `ConfigError` on a value S3 would refuse. Credentials are never read here (the SDK's
 * default chain reads them).
 */
export function s3CheckpointSettingsFromEnv(
  env: NodeJS.ProcessEnv,
): S3CheckpointSettings | undefined {
  const bucket = variable(env, VARIABLES.bucket);
  if (bucket === undefined) return undefined;
  const settings: S3CheckpointSettings = {
    bucket,
    prefix: asFolder(variable(env, VARIABLES.prefix) ?? ''),
    endpoint: variable(env, VARIABLES.endpoint),
    region: variable(env, VARIABLES.region) ?? 'us-east-1',
    forcePathStyle: pathStyleFrom(env),
  };
  checkSettings(settings, VARIABLES);
  return settings;
}

/** A non-empty prefix ends in `/`: the checkpoints of `replix/db_1` are not those of `replix/db_12`. */
function asFolder(prefix: string): string {
  return prefix === '' || prefix.endsWith('/') ? prefix : `${prefix}/`;
}
