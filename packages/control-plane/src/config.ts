import { randomBytes } from 'node:crypto';
import { mkdirSync, readFileSync, writeFileSync } from 'node:fs';
import { homedir } from 'node:os';
import { join, resolve } from 'node:path';
import { type BillingConfig, resolveBillingConfig } from './billing/billing-config.ts';
import { resolveWebhookSettings, type WebhookSettings } from './webhooks/webhook-settings.ts';

export const REGIONS = ['eu-west-1', 'us-east-1'] as const;
export type Region = (typeof REGIONS)[number];

/** Where tokens come from: the built-in issuer, or an external OIDC provider. */
export interface OidcSettings {
  readonly issuer: string;
  readonly audience: string;
  /** The JWKS address; discovered from the issuer's metadata when not given. */
  readonly jwksUrl: string | undefined;
  readonly groupsClaim: string;
}

/** Everything the control plane runs on, resolved and validated once at start. */
export interface ControlPlaneConfig {
  readonly dataDir: string;
  readonly databaseUrl: string | undefined;
  readonly secretKey: Buffer;
  readonly host: string;
  readonly port: number;
  /** The API's public address; the built-in issuer's `iss`. Set after listening when port is 0. */
  readonly publicUrl: string | undefined;
  readonly region: Region;
  /** undefined: the built-in issuer. */
  readonly oidc: OidcSettings | undefined;
  readonly logLevel: string;
  /** Health-monitor poll period. */
  readonly healthIntervalMs: number;
  readonly reconcileIntervalMs: number;
  /** `REPLIX_DRIVER`: where instances run (`process`, the default); checked by createDriver. */
  readonly driver?: string;
  /** Webhook delivery settings (`REPLIX_WEBHOOK*`); the defaults when absent. */
  readonly webhooks?: WebhookSettings;
  /** Payment provider and terms version (billing/billing-config.ts); the defaults when absent. */
  readonly billing?: BillingConfig;
}

export class ControlPlaneConfigError extends Error {
  constructor(message: string) {
    super(message);
    this.name = 'ControlPlaneConfigError';
  }
}

const BUILT_IN_AUDIENCE = 'replix';

export { BUILT_IN_AUDIENCE };

/** The embedded default keeps a generated secret key in the data folder, readable only by us. */
function dataFolderSecretKey(dataDir: string): Buffer {
  const path = join(dataDir, 'secret.key');
  try {
    return Buffer.from(readFileSync(path, 'utf8').trim(), 'hex');
  } catch {
    mkdirSync(dataDir, { recursive: true });
    const key = randomBytes(32);
    writeFileSync(path, key.toString('hex'), { mode: 0o600, flag: 'wx' });
    return key;
  }
}

function positiveInteger(name: string, text: string | undefined, fallback: number): number {
  if (text === undefined || text === '') return fallback;
  const value = Number(text);
  if (!Number.isInteger(value) || value < 0) {
    throw new ControlPlaneConfigError(`${name} must be a non-negative integer, not "${text}".`);
  }
  return value;
}

/**
 * Resolves the control plane's configuration from the environment:
 * `REPLIX_DATA_DIR` (default `~/.replix`), `DATABASE_URL` (PostgreSQL; default the embedded
 * store), `REPLIX_SECRET_KEY` (64 hex digits; required with `DATABASE_URL`), `REPLIX_API_PORT`
 * (default 4000), `REPLIX_API_HOST`, `REPLIX_PUBLIC_URL`, `REPLIX_REGION`, `REPLIX_LOG_LEVEL`,
 * `REPLIX_OIDC_ISSUER`, `REPLIX_OIDC_AUDIENCE`, `REPLIX_OIDC_JWKS_URL`, `REPLIX_OIDC_GROUPS_CLAIM`.
 */
export function resolveControlPlaneConfig(
  env: NodeJS.ProcessEnv = process.env,
  overrides: Partial<ControlPlaneConfig> = {},
): ControlPlaneConfig {
  const dataDir = resolve(env.REPLIX_DATA_DIR ?? join(homedir(), '.replix'));
  const databaseUrl = env.DATABASE_URL || undefined;
  if (databaseUrl && !/^postgres(ql)?:\/\//.test(databaseUrl)) {
    throw new ControlPlaneConfigError('DATABASE_URL must be a postgres:// URL.');
  }
  let secretKey: Buffer;
  if (env.REPLIX_SECRET_KEY) {
    if (!/^[0-9a-f]{64}$/i.test(env.REPLIX_SECRET_KEY)) {
      throw new ControlPlaneConfigError('REPLIX_SECRET_KEY must be 64 hex digits (32 bytes).');
    }
    secretKey = Buffer.from(env.REPLIX_SECRET_KEY, 'hex');
  } else if (databaseUrl) {
    throw new ControlPlaneConfigError(
      'REPLIX_SECRET_KEY (64 hex digits) is required with DATABASE_URL: every control-plane process must share it.',
    );
  } else {
    secretKey = dataFolderSecretKey(dataDir);
  }
  const region = (env.REPLIX_REGION ?? 'eu-west-1') as Region;
  if (!REGIONS.includes(region)) {
    throw new ControlPlaneConfigError(`REPLIX_REGION must be one of ${REGIONS.join(', ')}.`);
  }
  const port = positiveInteger('REPLIX_API_PORT', env.REPLIX_API_PORT, 4000);
  if (port > 65535) throw new ControlPlaneConfigError('REPLIX_API_PORT must be at most 65535.');
  const oidc: OidcSettings | undefined = env.REPLIX_OIDC_ISSUER
    ? {
        issuer: env.REPLIX_OIDC_ISSUER,
        audience: env.REPLIX_OIDC_AUDIENCE ?? BUILT_IN_AUDIENCE,
        jwksUrl: env.REPLIX_OIDC_JWKS_URL || undefined,
        groupsClaim: env.REPLIX_OIDC_GROUPS_CLAIM ?? 'groups',
      }
    : undefined;
  return Object.freeze({
    dataDir,
    databaseUrl,
    secretKey,
    host: env.REPLIX_API_HOST ?? '127.0.0.1',
    port,
    publicUrl: env.REPLIX_PUBLIC_URL || undefined,
    region,
    oidc,
    logLevel: env.REPLIX_LOG_LEVEL ?? 'info',
    driver: env.REPLIX_DRIVER || 'process',
    billing: resolveBillingConfig(env),
    healthIntervalMs: positiveInteger(
      'REPLIX_HEALTH_INTERVAL_MS',
      env.REPLIX_HEALTH_INTERVAL_MS,
      2000,
    ),
    reconcileIntervalMs: positiveInteger(
      'REPLIX_RECONCILE_INTERVAL_MS',
      env.REPLIX_RECONCILE_INTERVAL_MS,
      500,
    ),
    webhooks: resolveWebhookSettings(env),
    ...overrides,
  });
}
