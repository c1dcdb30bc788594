import { Buffer } from 'node:buffer';
import { randomBytes } from 'node:crypto';
import { mkdirSync, readFileSync, writeFileSync } from 'node:fs';
import { homedir } from 'node:os';
import { join, resolve } from 'node:path';
import process from 'node:process';
import {
  ConfigError,
  decodeEnvironment,
  type Environment,
  flagVariable,
  hexKeyVariable,
  TRACING_VARIABLE_SCHEMAS,
  type TracingSettings,
  tracingSettingsFrom,
} from '@replix/runtime';
import { type StaticDecode, Type } from 'typebox';
import {
  KUBERNETES_VARIABLE_SCHEMAS,
  type KubernetesSettings,
  kubernetesSettingsFrom,
} from './adapters/drivers/kubernetes/kubernetes-settings.ts';
import {
  API_RATE_LIMIT_VARIABLE_SCHEMAS,
  type ApiRateLimitSettings,
  apiRateLimitSettingsFrom,
} from './api/rate-limit-settings.ts';
import { BUILT_IN_AUDIENCE } from './application/identity/audience.ts';
import {
  BILLING_VARIABLE_SCHEMAS,
  type BillingConfig,
  billingConfigFrom,
} from './application/payments/billing-config.ts';
import {
  WEBHOOK_VARIABLE_SCHEMAS,
  type WebhookSettings,
  webhookSettingsFrom,
} from './application/webhook-delivery/webhook-settings.ts';
import { REGIONS, type Region } from './domain/regions.ts';

/** Where instances run: child processes of this machine, or pods of a Kubernetes cluster. */
export const DRIVERS = ['process', 'kubernetes'] as const;
export type DriverName = (typeof DRIVERS)[number];

/** Where tokens come from: the built-in issuer, or an external OIDC provider. */
export interface OidcSettings {
  readonly issuer: string;
  readonly audience: string;
  /** The JWKS address; discovered from the issuer's metadata when not given. */
  readonly jwksUrl: string | undefined;
  readonly groupsClaim: string;
  /** The dashboard's public client at the issuer (code flow with PKCE); undefined: no redirect sign-in. */
  readonly dashboardClientId: string | undefined;
  /** The CLI's public client at the issuer (device flow); undefined: `replix login --token` only. */
  readonly cliClientId: string | undefined;
  /** The scopes the dashboard and the CLI ask for, space-separated. */
  readonly scopes: string;
}

/** Everything the control plane runs on, decoded and validated once at start; every section present. */
export interface ControlPlaneConfig {
  readonly dataDir: string;
  readonly databaseUrl: string | undefined;
  readonly secretKey: Buffer;
  readonly host: string;
  readonly port: number;
  /** Where a process answers `/live` and `/ready` besides the API; undefined: no listener. */
  readonly probe: { readonly host: string; readonly port: number } | undefined;
  /** `REPLIX_METRICS_TOKEN`: the bearer token `/metrics` asks for; undefined: no `/metrics`. */
  readonly metricsToken: string | undefined;
  /** The API's public address (billing returns, sign-in links); undefined: the address asked. */
  readonly publicUrl: string | undefined;
  readonly region: Region;
  /** undefined: the built-in issuer. */
  readonly oidc: OidcSettings | undefined;
  readonly logLevel: string;
  /** Health-monitor poll period. */
  readonly healthIntervalMs: number;
  readonly reconcileIntervalMs: number;
  /**
   * `REPLIX_REPLICATION_DROP_RETRY_SCALE` (default 1): multiplies the waits between attempts to
   * drop a source's replication state (tests shrink them).
   */
  readonly replicationDropRetryScale: number;
  /**
   * `REPLIX_MIN_POLL_INTERVAL`: the shortest poll-mode sync interval for every account, in
   * place of each plan's `pollModeMinSyncInterval`; undefined: the plans' floors. `replix start`
   * sets it to 1.
   */
  readonly minPollInterval: number | undefined;
  /**
   * `REPLIX_BUNDLE_CACHE_DIR`: where the builder keeps bundled instance programs; undefined:
   * `<dataDir>/artifacts/.bundle-cache`. Control planes of one installation may share one.
   */
  readonly bundleCacheDir: string | undefined;
  /** `REPLIX_DRIVER`: where instances run. */
  readonly driver: DriverName;
  /**
   * `REPLIX_KEEP_INSTANCES_ON_STOP`: with the process driver, a graceful stop leaves the
   * instances and the endpoint router running, as a crash does, for the next start to adopt
   * (a restart or upgrade that costs queries nothing).
   */
  readonly keepInstancesOnStop: boolean;
  /** The Kubernetes driver's settings (`REPLIX_K8S_*`); undefined with the process driver. */
  readonly kubernetes: KubernetesSettings | undefined;
  /** Webhook delivery settings (`REPLIX_WEBHOOK*`). */
  readonly webhooks: WebhookSettings;
  /** Payment provider and terms version (billing/billing-config.ts). */
  readonly billing: BillingConfig;
  /** Where spans go (`OTEL_*`, docs/tracing.md), the instances' too; undefined: tracing is off. */
  readonly tracing: TracingSettings | undefined;
  /** The `/v1` rate limits (`REPLIX_API_RATE_LIMIT_*`). */
  readonly apiRateLimits: ApiRateLimitSettings;
}

/** The control plane's spans are `replix-control-plane`'s unless `OTEL_SERVICE_NAME` says otherwise. */
export const CONTROL_PLANE_SERVICE_NAME = 'replix-control-plane';

/**
 * The control plane's environment (docs/control-plane/README.md, "Configuration", with
 * billing.md and webhooks.md for their sections, and docs/tracing.md). The CLI reads some of the same variables.
 */
export const CONTROL_PLANE_VARIABLES = Type.Object({
  REPLIX_DATA_DIR: Type.Optional(Type.String({ description: 'data folder (default ~/.replix)' })),
  DATABASE_URL: Type.Optional(
    Type.String({
      pattern: '^postgres(ql)?://',
      problem: 'must be a postgres:// URL',
      description: 'the PostgreSQL store (default the embedded store)',
    }),
  ),
  REPLIX_SECRET_KEY: Type.Optional(
    hexKeyVariable({
      problem: 'must be 64 hex digits (32 bytes)',
      description: 'the key that seals secrets at rest',
    }),
  ),
  REPLIX_API_PORT: Type.Integer({
    minimum: 0,
    maximum: 65535,
    default: 4000,
    problem: 'must be an integer from 0 to 65535',
    echo: true,
    description: 'where the API listens',
  }),
  REPLIX_API_HOST: Type.String({
    default: '127.0.0.1',
    description: 'where the API listens',
  }),
  REPLIX_PROBE_PORT: Type.Optional(
    Type.Integer({
      minimum: 0,
      maximum: 65535,
      problem: 'must be an integer from 0 to 65535',
      echo: true,
      description: 'where a process answers /live and /ready (default none)',
    }),
  ),
  REPLIX_PROBE_HOST: Type.String({
    default: '127.0.0.1',
    description: 'where the probe listener listens',
  }),
  REPLIX_METRICS_TOKEN: Type.Optional(
    Type.String({
      minLength: 16,
      problem: 'must be at least 16 characters',
      description: 'the bearer token a Prometheus scrape of /metrics sends (default: no /metrics)',
    }),
  ),
  REPLIX_PUBLIC_URL: Type.Optional(Type.String({ description: "the API's public address" })),
  REPLIX_REGION: Type.Enum([...REGIONS], {
    default: REGIONS[0],
    problem: `must be one of ${REGIONS.join(', ')}`,
    description: "this process's region",
  }),
  REPLIX_OIDC_ISSUER: Type.Optional(Type.String({ description: 'an OpenID Connect issuer' })),
  REPLIX_OIDC_AUDIENCE: Type.String({
    default: BUILT_IN_AUDIENCE,
    description: 'the `aud` tokens must carry',
  }),
  REPLIX_OIDC_JWKS_URL: Type.Optional(Type.String({ description: "the issuer's JWKS" })),
  REPLIX_OIDC_GROUPS_CLAIM: Type.String({
    default: 'groups',
    description: "the claim listing the user's groups",
  }),
  REPLIX_OIDC_DASHBOARD_CLIENT_ID: Type.Optional(
    Type.String({ description: "the dashboard's client id at the issuer" }),
  ),
  REPLIX_OIDC_CLI_CLIENT_ID: Type.Optional(
    Type.String({ description: "the CLI's client id at the issuer" }),
  ),
  REPLIX_OIDC_SCOPES: Type.String({
    default: 'openid email profile',
    description: 'the scopes the dashboard and the CLI ask for',
  }),
  REPLIX_LOG_LEVEL: Type.String({
    default: 'info',
    description: 'pino level',
  }),
  REPLIX_HEALTH_INTERVAL_MS: Type.Integer({
    minimum: 0,
    default: 2000,
    problem: 'must be a non-negative integer',
    echo: true,
    description: 'health-monitor polling period',
  }),
  REPLIX_RECONCILE_INTERVAL_MS: Type.Integer({
    minimum: 0,
    default: 500,
    problem: 'must be a non-negative integer',
    echo: true,
    description: 'reconciler polling period',
  }),
  REPLIX_REPLICATION_DROP_RETRY_SCALE: Type.Number({
    exclusiveMinimum: 0,
    maximum: 1,
    default: 1,
    problem: 'must be a number above 0 and at most 1',
    echo: true,
    description: "multiplies the waits between attempts to drop a source's replication state",
  }),
  REPLIX_MIN_POLL_INTERVAL: Type.Optional(
    Type.Integer({
      minimum: 1,
      problem: 'must be a whole number of seconds, at least 1',
      echo: true,
      description: "the shortest poll interval for every account, in place of the plans' floors",
    }),
  ),
  REPLIX_BUNDLE_CACHE_DIR: Type.Optional(
    Type.String({
      minLength: 1,
      description: 'where the builder keeps bundled instance programs (default in the data folder)',
    }),
  ),
  REPLIX_DRIVER: Type.Enum([...DRIVERS], {
    default: 'process',
    problem: 'must be "process" or "kubernetes"',
    echo: true,
    description: 'where instances run',
  }),
  REPLIX_KEEP_INSTANCES_ON_STOP: flagVariable({
    problem: 'must be 1 or 0',
    echo: true,
    description:
      'process driver: a graceful stop leaves instances and endpoints running for the next start to adopt',
  }),
  ...KUBERNETES_VARIABLE_SCHEMAS,
  ...BILLING_VARIABLE_SCHEMAS,
  ...WEBHOOK_VARIABLE_SCHEMAS,
  ...TRACING_VARIABLE_SCHEMAS,
  ...API_RATE_LIMIT_VARIABLE_SCHEMAS,
});
export type ControlPlaneVariables = StaticDecode<typeof CONTROL_PLANE_VARIABLES>;

/** Values a command sets in place of the environment's (`--port`): decoded with it. */
export type ControlPlaneOverrides = Readonly<
  Partial<Record<keyof typeof CONTROL_PLANE_VARIABLES.properties, string | undefined>>
>;

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

/** The data folder, as the control plane and the CLI resolve it. */
export function dataDirOf(variables: Pick<ControlPlaneVariables, 'REPLIX_DATA_DIR'>): string {
  return resolve(variables.REPLIX_DATA_DIR ?? join(homedir(), '.replix'));
}

function secretKeyOf(variables: ControlPlaneVariables, dataDir: string): Buffer {
  if (variables.REPLIX_SECRET_KEY) return variables.REPLIX_SECRET_KEY;
  if (variables.DATABASE_URL) {
    throw new ConfigError(
      'REPLIX_SECRET_KEY (64 hex digits) is required with DATABASE_URL: every control-plane process must share it.',
    );
  }
  return dataFolderSecretKey(dataDir);
}

function oidcOf(variables: ControlPlaneVariables): OidcSettings | undefined {
  if (!variables.REPLIX_OIDC_ISSUER) return undefined;
  return Object.freeze({
    issuer: variables.REPLIX_OIDC_ISSUER,
    audience: variables.REPLIX_OIDC_AUDIENCE,
    jwksUrl: variables.REPLIX_OIDC_JWKS_URL,
    groupsClaim: variables.REPLIX_OIDC_GROUPS_CLAIM,
    dashboardClientId: variables.REPLIX_OIDC_DASHBOARD_CLIENT_ID,
    cliClientId: variables.REPLIX_OIDC_CLI_CLIENT_ID,
    scopes: variables.REPLIX_OIDC_SCOPES,
  });
}

/** The environment with a command's overrides laid over it (unset ones leave it as it is). */
function withOverrides(env: Environment, overrides: ControlPlaneOverrides): Environment {
  const given = Object.entries(overrides).filter(([, value]) => value !== undefined);
  return { ...env, ...Object.fromEntries(given) };
}

/**
 * Decodes the control plane's configuration from the environment (`CONTROL_PLANE_VARIABLES`)
 * with a command's overrides laid over it first, so they are checked like the rest.
 */
export function resolveControlPlaneConfig(
  env: Environment = process.env,
  overrides: ControlPlaneOverrides = {},
): ControlPlaneConfig {
  const layered = withOverrides(env, overrides);
  const variables = decodeEnvironment(CONTROL_PLANE_VARIABLES, layered);
  const dataDir = dataDirOf(variables);
  return Object.freeze({
    dataDir,
    databaseUrl: variables.DATABASE_URL,
    secretKey: secretKeyOf(variables, dataDir),
    host: variables.REPLIX_API_HOST,
    port: variables.REPLIX_API_PORT,
    probe:
      variables.REPLIX_PROBE_PORT === undefined
        ? undefined
        : Object.freeze({ host: variables.REPLIX_PROBE_HOST, port: variables.REPLIX_PROBE_PORT }),
    metricsToken: variables.REPLIX_METRICS_TOKEN,
    publicUrl: variables.REPLIX_PUBLIC_URL,
    region: variables.REPLIX_REGION,
    oidc: oidcOf(variables),
    logLevel: variables.REPLIX_LOG_LEVEL,
    healthIntervalMs: variables.REPLIX_HEALTH_INTERVAL_MS,
    reconcileIntervalMs: variables.REPLIX_RECONCILE_INTERVAL_MS,
    replicationDropRetryScale: variables.REPLIX_REPLICATION_DROP_RETRY_SCALE,
    minPollInterval: variables.REPLIX_MIN_POLL_INTERVAL,
    bundleCacheDir:
      variables.REPLIX_BUNDLE_CACHE_DIR === undefined
        ? undefined
        : resolve(variables.REPLIX_BUNDLE_CACHE_DIR),
    driver: variables.REPLIX_DRIVER,
    keepInstancesOnStop: variables.REPLIX_KEEP_INSTANCES_ON_STOP,
    kubernetes:
      variables.REPLIX_DRIVER === 'kubernetes' ? kubernetesSettingsFrom(variables) : undefined,
    webhooks: webhookSettingsFrom(variables),
    billing: billingConfigFrom(variables),
    tracing: tracingSettingsFrom(variables, CONTROL_PLANE_SERVICE_NAME),
    apiRateLimits: apiRateLimitSettingsFrom(variables),
  });
}

/** What a build job needs of the control plane's settings; the secret key only without a credential. */
export type BuildJobConfig = Pick<ControlPlaneConfig, 'databaseUrl' | 'dataDir' | 'logLevel'> & {
  readonly secretKey?: ControlPlaneConfig['secretKey'];
};

const STORE_VARIABLES = Type.Object({
  DATABASE_URL: CONTROL_PLANE_VARIABLES.properties.DATABASE_URL,
  REPLIX_DATA_DIR: CONTROL_PLANE_VARIABLES.properties.REPLIX_DATA_DIR,
  REPLIX_LOG_LEVEL: CONTROL_PLANE_VARIABLES.properties.REPLIX_LOG_LEVEL,
});

/**
 * The settings of a build job given its build's credential (REPLIX_BUILD_SOURCE_URL): the
 * store, the data folder and the log level, and no secret key, which such a job never gets
 * (a Kubernetes build Job: build-credential.ts).
 */
export function buildJobStoreConfig(env: Environment = process.env): BuildJobConfig {
  const variables = decodeEnvironment(STORE_VARIABLES, env);
  return Object.freeze({
    databaseUrl: variables.DATABASE_URL,
    dataDir: dataDirOf(variables),
    logLevel: variables.REPLIX_LOG_LEVEL,
  });
}
