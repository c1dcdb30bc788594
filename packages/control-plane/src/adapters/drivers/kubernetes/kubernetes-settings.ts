import { ConfigError } from '@replix/runtime';
import { type StaticDecode, Type } from 'typebox';
// The check alone, not `@replix/instance`'s index: configuration loads no instance program.
import { checkS3Settings } from '../../../../../instance/src/snapshot/s3-checkpoint-settings.ts';
import type { CheckpointBucket } from './checkpoint-bucket.ts';
import { type EndpointRoute, endpointHost } from './endpoint-manifests.ts';
import { DNS_LABEL, namespaceFor } from './kubernetes-names.ts';

/** How the Kubernetes driver runs (`REPLIX_DRIVER=kubernetes`); docs/deploy/kubernetes.md documents each variable. */
export interface KubernetesSettings {
  /** `REPLIX_K8S_IMAGE`: the Replix runtime image the instance pods run. */
  readonly image: string;
  /** `REPLIX_K8S_REPLIX_BIN`: the `replix` CLI inside the image. */
  readonly replixBin: string;
  /** `REPLIX_K8S_NAMESPACE_PATTERN` (default `replix-{region}`): the operator's namespace of each region. */
  readonly namespacePattern: string;
  /** `REPLIX_K8S_ENDPOINT_HOSTS`: region → host pattern with `{database}`. */
  readonly hostPatterns: Readonly<Record<string, string>>;
  /** `REPLIX_K8S_ROUTE`: `httproute:<namespace>/<gateway>` or `ingress:<class>`. */
  readonly route: EndpointRoute;
  /** `REPLIX_K8S_ENDPOINT_SCHEME` (default https): the scheme of the endpoint URLs. */
  readonly endpointScheme: 'http' | 'https';
  /** `REPLIX_K8S_ARTIFACT_URL`: the `api` role's base URL as instance pods reach it. */
  readonly artifactUrl: string;
  /** Where build Jobs run and what they mount (kubernetes-build-runner.ts). */
  readonly builds: BuildJobSettings;
  /**
   * `REPLIX_K8S_CHECKPOINT_*`: the S3 bucket instance pods keep their checkpoints in
   * (checkpoint-bucket.ts); absent without `REPLIX_K8S_CHECKPOINT_BUCKET`: they keep none.
   */
  readonly checkpoints?: CheckpointBucket;
}

/** Build Jobs run in the control plane's namespace: its artifacts claim and Secret are there. */
export interface BuildJobSettings {
  /** `REPLIX_K8S_BUILD_NAMESPACE` (default `replix-system`). */
  readonly namespace: string;
  /** `REPLIX_K8S_ARTIFACTS_CLAIM` (default `replix-data`): the ReadWriteMany data folder. */
  readonly artifactsClaim: string;
  /** `REPLIX_K8S_STORE_SECRET` (default `replix-secrets`): the Jobs take its `DATABASE_URL` only. */
  readonly storeSecret: string;
  /** `REPLIX_K8S_BUILD_DEADLINE_SECONDS` (default 1800): a Job's `activeDeadlineSeconds`. */
  readonly deadlineSeconds: number;
}

/** The Kubernetes driver's variables of the control plane's environment. */
export const KUBERNETES_VARIABLE_SCHEMAS = {
  REPLIX_K8S_IMAGE: Type.Optional(
    Type.String({ description: 'kubernetes driver: the runtime image of instance pods' }),
  ),
  REPLIX_K8S_REPLIX_BIN: Type.String({
    default: '/app/packages/cli/bin/replix.js',
    description: 'kubernetes driver: the replix CLI inside the runtime image',
  }),
  REPLIX_K8S_NAMESPACE_PATTERN: Type.String({
    default: 'replix-{region}',
    description: 'kubernetes driver: the namespace of a region ({region}), created by the operator',
  }),
  REPLIX_K8S_ENDPOINT_HOSTS: Type.Optional(
    Type.String({ description: 'kubernetes driver: JSON object, region → host pattern' }),
  ),
  REPLIX_K8S_ROUTE: Type.Optional(
    Type.String({
      description: 'kubernetes driver: httproute:<namespace>/<gateway> or ingress:<class>',
    }),
  ),
  REPLIX_K8S_ENDPOINT_SCHEME: Type.Enum(['https', 'http'], {
    default: 'https',
    problem: 'must be "https" or "http"',
    echo: true,
    description: 'kubernetes driver: the scheme of endpoint URLs',
  }),
  REPLIX_K8S_ARTIFACT_URL: Type.Optional(
    Type.String({ description: "kubernetes driver: the api role's in-cluster base URL" }),
  ),
  REPLIX_K8S_BUILD_NAMESPACE: Type.String({
    default: 'replix-system',
    description: "kubernetes driver: the namespace of build Jobs (the control plane's)",
  }),
  REPLIX_K8S_ARTIFACTS_CLAIM: Type.String({
    default: 'replix-data',
    description: 'kubernetes driver: the data folder claim build Jobs mount',
  }),
  REPLIX_K8S_STORE_SECRET: Type.String({
    default: 'replix-secrets',
    description: 'kubernetes driver: the Secret build Jobs take DATABASE_URL from',
  }),
  REPLIX_K8S_BUILD_DEADLINE_SECONDS: Type.Integer({
    minimum: 60,
    default: 1800,
    problem: 'must be an integer of at least 60',
    echo: true,
    description: 'kubernetes driver: the longest a build Job runs',
  }),
  REPLIX_K8S_CHECKPOINT_BUCKET: Type.Optional(
    Type.String({
      description: 'kubernetes driver: the S3 bucket of instance checkpoints; unset: none',
    }),
  ),
  REPLIX_K8S_CHECKPOINT_PREFIX: Type.String({
    default: 'replix/',
    description: "kubernetes driver: the checkpoints' key prefix (then <database>/<replica>/)",
  }),
  REPLIX_K8S_CHECKPOINT_ENDPOINT: Type.Optional(
    Type.String({ description: 'kubernetes driver: an S3-compatible endpoint; unset: AWS' }),
  ),
  REPLIX_K8S_CHECKPOINT_REGION: Type.Optional(
    Type.String({ description: "kubernetes driver: the checkpoint bucket's region" }),
  ),
  REPLIX_K8S_CHECKPOINT_PATH_STYLE: Type.Optional(
    Type.Enum(['true', 'false'], {
      problem: 'must be "true" or "false"',
      echo: true,
      description: 'kubernetes driver: path-style bucket addressing (most S3-compatible servers)',
    }),
  ),
  REPLIX_K8S_CHECKPOINT_SECRET: Type.Optional(
    Type.String({
      description:
        "kubernetes driver: the Secret with the bucket's AWS_* keys; unset: the pod's identity",
    }),
  ),
};
const KUBERNETES_VARIABLES = Type.Object(KUBERNETES_VARIABLE_SCHEMAS);

function required(value: string | undefined, name: string): string {
  if (value === undefined || value.trim() === '') {
    throw new ConfigError(`${name} is required with REPLIX_DRIVER=kubernetes.`);
  }
  return value.trim();
}

function hostPatternsOf(text: string, namespacePattern: string): Record<string, string> {
  let parsed: unknown;
  try {
    parsed = JSON.parse(text);
  } catch {
    throw new ConfigError(
      'REPLIX_K8S_ENDPOINT_HOSTS must be a JSON object: region → host pattern.',
    );
  }
  if (typeof parsed !== 'object' || parsed === null || Array.isArray(parsed)) {
    throw new ConfigError(
      'REPLIX_K8S_ENDPOINT_HOSTS must be a JSON object: region → host pattern.',
    );
  }
  const patterns: Record<string, string> = {};
  for (const [region, pattern] of Object.entries(parsed)) {
    if (typeof pattern !== 'string') {
      throw new ConfigError(
        `REPLIX_K8S_ENDPOINT_HOSTS: the pattern of ${region} must be a string.`,
      );
    }
    patterns[region] = pattern;
  }
  if (Object.keys(patterns).length === 0) {
    throw new ConfigError('REPLIX_K8S_ENDPOINT_HOSTS must name at least one region.');
  }
  for (const region of Object.keys(patterns)) {
    try {
      // A sample database shows a pattern that never gives a DNS name.
      endpointHost(
        {
          hostPatterns: patterns,
          namespacePattern,
          route: { kind: 'ingress', ingressClassName: 'x' },
        },
        { accountId: 'a', databaseId: 'sample', region, servingInstanceId: null },
      );
    } catch (error) {
      throw new ConfigError(`REPLIX_K8S_ENDPOINT_HOSTS: ${(error as Error).message}`);
    }
  }
  return patterns;
}

function routeOf(text: string): EndpointRoute {
  const httpRoute = /^httproute:([^/\s]+)\/([^/\s]+)$/.exec(text);
  if (
    httpRoute &&
    DNS_LABEL.test(httpRoute[1] as string) &&
    DNS_LABEL.test(httpRoute[2] as string)
  ) {
    return {
      kind: 'httproute',
      gateway: { namespace: httpRoute[1] as string, name: httpRoute[2] as string },
    };
  }
  const ingress = /^ingress:(\S+)$/.exec(text);
  if (ingress && /^[a-z0-9]([-a-z0-9.]*[a-z0-9])?$/.test(ingress[1] as string)) {
    return { kind: 'ingress', ingressClassName: ingress[1] as string };
  }
  throw new ConfigError(
    'REPLIX_K8S_ROUTE must be httproute:<namespace>/<gateway> or ingress:<class>.',
  );
}

function artifactUrlOf(text: string): string {
  let url: URL;
  try {
    url = new URL(text);
  } catch {
    throw new ConfigError('REPLIX_K8S_ARTIFACT_URL must be an http:// or https:// URL.');
  }
  if (
    (url.protocol !== 'http:' && url.protocol !== 'https:') ||
    url.username ||
    url.password ||
    url.search ||
    url.hash
  ) {
    throw new ConfigError(
      'REPLIX_K8S_ARTIFACT_URL must be an http:// or https:// URL without credentials, query or fragment.',
    );
  }
  return url.href.replace(/\/+$/, '');
}

function dnsLabelOf(text: string, name: string): string {
  if (text.length > 63 || !DNS_LABEL.test(text)) {
    throw new ConfigError(
      `${name} must be a DNS-1123 label (lowercase letters, digits and "-", at most 63).`,
    );
  }
  return text;
}

/** An object name (a claim's, a Secret's): DNS-1123 labels joined by dots, at most 253. */
function dnsSubdomainOf(text: string, name: string): string {
  if (text.length > 253 || !text.split('.').every((label) => DNS_LABEL.test(label))) {
    throw new ConfigError(
      `${name} must be a Kubernetes object name (lowercase letters, digits, "-" and ".").`,
    );
  }
  return text;
}

/** A non-empty prefix ends in `/`: the keys of `replix/db_1` are not those of `replix/db_12`. */
function asFolder(prefix: string): string {
  return prefix === '' || prefix.endsWith('/') ? prefix : `${prefix}/`;
}

/**
 * The checkpoint bucket of the variables, checked as the instance checks its own
 * (s3-checkpoint-settings.ts), each problem named by the variable that has it; undefined
 * without a bucket (the other variables are then not read).
 */
function checkpointBucketOf(
  variables: StaticDecode<typeof KUBERNETES_VARIABLES>,
): CheckpointBucket | undefined {
  const bucket = variables.REPLIX_K8S_CHECKPOINT_BUCKET?.trim();
  if (!bucket) return undefined;
  const prefix = asFolder(variables.REPLIX_K8S_CHECKPOINT_PREFIX.trim());
  const endpoint = variables.REPLIX_K8S_CHECKPOINT_ENDPOINT?.trim() || undefined;
  // One field more each time: the first check that fails is the variable just added.
  const steps: Array<[string, Parameters<typeof checkS3Settings>[0]]> = [
    ['REPLIX_K8S_CHECKPOINT_BUCKET', { bucket, prefix: '' }],
    ['REPLIX_K8S_CHECKPOINT_PREFIX', { bucket, prefix }],
    ['REPLIX_K8S_CHECKPOINT_ENDPOINT', { bucket, prefix, endpoint }],
  ];
  for (const [name, settings] of steps) {
    try {
      checkS3Settings(settings);
    } catch (error) {
      throw new ConfigError(`${name}: ${(error as Error).message}`);
    }
  }
  const pathStyle = variables.REPLIX_K8S_CHECKPOINT_PATH_STYLE;
  const secret = variables.REPLIX_K8S_CHECKPOINT_SECRET?.trim() || undefined;
  return Object.freeze({
    bucket,
    prefix,
    ...(endpoint === undefined ? {} : { endpoint }),
    ...(variables.REPLIX_K8S_CHECKPOINT_REGION?.trim()
      ? { region: variables.REPLIX_K8S_CHECKPOINT_REGION.trim() }
      : {}),
    ...(pathStyle === undefined ? {} : { pathStyle: pathStyle === 'true' }),
    ...(secret === undefined
      ? {}
      : { secret: dnsSubdomainOf(secret, 'REPLIX_K8S_CHECKPOINT_SECRET') }),
  });
}

/** The Kubernetes settings of the decoded variables (checked only with REPLIX_DRIVER=kubernetes). */
export function kubernetesSettingsFrom(
  variables: StaticDecode<typeof KUBERNETES_VARIABLES>,
): KubernetesSettings {
  const namespacePattern = variables.REPLIX_K8S_NAMESPACE_PATTERN;
  try {
    namespaceFor(namespacePattern, { region: 'eu-west-1' });
  } catch (error) {
    throw new ConfigError(`REPLIX_K8S_NAMESPACE_PATTERN: ${(error as Error).message}`);
  }
  const checkpoints = checkpointBucketOf(variables);
  return Object.freeze({
    image: required(variables.REPLIX_K8S_IMAGE, 'REPLIX_K8S_IMAGE'),
    replixBin: variables.REPLIX_K8S_REPLIX_BIN,
    namespacePattern,
    hostPatterns: Object.freeze(
      hostPatternsOf(
        required(variables.REPLIX_K8S_ENDPOINT_HOSTS, 'REPLIX_K8S_ENDPOINT_HOSTS'),
        namespacePattern,
      ),
    ),
    route: routeOf(required(variables.REPLIX_K8S_ROUTE, 'REPLIX_K8S_ROUTE')),
    endpointScheme: variables.REPLIX_K8S_ENDPOINT_SCHEME,
    artifactUrl: artifactUrlOf(
      required(variables.REPLIX_K8S_ARTIFACT_URL, 'REPLIX_K8S_ARTIFACT_URL'),
    ),
    builds: Object.freeze({
      namespace: dnsLabelOf(variables.REPLIX_K8S_BUILD_NAMESPACE, 'REPLIX_K8S_BUILD_NAMESPACE'),
      artifactsClaim: dnsSubdomainOf(
        variables.REPLIX_K8S_ARTIFACTS_CLAIM,
        'REPLIX_K8S_ARTIFACTS_CLAIM',
      ),
      storeSecret: dnsSubdomainOf(variables.REPLIX_K8S_STORE_SECRET, 'REPLIX_K8S_STORE_SECRET'),
      deadlineSeconds: variables.REPLIX_K8S_BUILD_DEADLINE_SECONDS,
    }),
    ...(checkpoints === undefined ? {} : { checkpoints }),
  });
}
