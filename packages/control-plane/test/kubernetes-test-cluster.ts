import { type Agent, request as httpRequest } from 'node:http';
import { isIP } from 'node:net';
import { fileURLToPath } from 'node:url';
import { KubeConfig } from '@kubernetes/client-node';
import pino from 'pino';
import { KubernetesApi } from '../src/adapters/drivers/kubernetes/kubernetes-api.ts';
import { KubernetesDriver } from '../src/adapters/drivers/kubernetes/kubernetes-driver.ts';
import { replicaObjectName } from '../src/adapters/drivers/kubernetes/kubernetes-names.ts';
import {
  KUBERNETES_PERMISSIONS,
  type KubernetesPermission,
} from '../src/adapters/drivers/kubernetes/permissions.ts';

/** The `replix` command of this checkout: what the fake kubelet's pods run as the image's CLI. */
export const REPLIX_BIN = fileURLToPath(new URL('../../cli/bin/replix.js', import.meta.url));

/**
 * A GET as a client sends it: to an IP address directly; to a name (an endpoint's host, which
 * no DNS here resolves) through the fake's gateway with that `Host`.
 */
export function throughGateway(
  gatewayUrl: string,
  url: string,
  headers: Record<string, string>,
  agent?: Agent,
): Promise<Response> {
  const target = new URL(url);
  if (isIP(target.hostname)) return fetch(url, { headers });
  const gateway = new URL(gatewayUrl);
  return new Promise((resolve, reject) => {
    const outgoing = httpRequest(
      {
        host: gateway.hostname,
        port: gateway.port,
        path: `${target.pathname}${target.search}`,
        headers: { ...headers, host: target.host },
        ...(agent ? { agent } : {}),
      },
      (response) => {
        const chunks: Buffer[] = [];
        response.on('data', (chunk: Buffer) => chunks.push(chunk));
        response.on('error', reject);
        response.on('end', () =>
          resolve(
            new Response(Buffer.concat(chunks), {
              status: response.statusCode ?? 502,
              headers: { 'content-type': String(response.headers['content-type'] ?? '') },
            }),
          ),
        );
      },
    );
    outgoing.on('error', reject);
    outgoing.end();
  });
}

/**
 * The API calls among `requests` (the fake's record) as `group|resource|verb`, the way RBAC
 * authorizes them: an apply (PATCH) as `patch` and `create` (an apply that creates is
 * authorized as create). A call outside any namespace (a cluster-wide list, a namespace
 * itself) is `cluster:group|resource|verb`, which no Role grants. Discovery (`/api`, `/apis`,
 * group versions) is open to every client.
 */
export function apiCallsOf(
  requests: readonly { method: string; path: string; query: Readonly<Record<string, string>> }[],
): Set<string> {
  const calls = new Set<string>();
  for (const { method, path, query } of requests) {
    const match =
      /^\/(?:api\/v1|apis\/([^/]+)\/[^/]+)\/(?:namespaces\/[^/]+\/)?([^/]+)(?:\/([^/]+)(?:\/([^/]+))?)?$/.exec(
        path,
      );
    if (!match) continue;
    const [, group = '', plural, name, subresource] = match;
    const scope = path.includes('/namespaces/') && plural !== 'namespaces' ? '' : 'cluster:';
    const resource = subresource ? `${plural}/${subresource}` : plural;
    const verbs =
      method === 'GET'
        ? [name ? 'get' : query.watch ? 'watch' : 'list']
        : method === 'PATCH'
          ? ['patch', 'create']
          : [method === 'DELETE' ? 'delete' : method];
    for (const verb of verbs) calls.add(`${scope}${group}|${resource}|${verb}`);
  }
  return calls;
}

/**
 * The calls the rules (KUBERNETES_PERMISSIONS unless given, granted by a Role in each
 * namespace, deploy/kubernetes/rbac.yaml) do not grant: every cluster-wide call among them.
 */
export function callsNotGranted(
  calls: Iterable<string>,
  permissions: readonly KubernetesPermission[] = KUBERNETES_PERMISSIONS,
): string[] {
  const granted = new Set(
    permissions.flatMap((rule) =>
      rule.verbs.map((verb) => `${rule.apiGroup}|${rule.resource}|${verb}`),
    ),
  );
  return [...calls].filter((call) => !granted.has(call));
}

/**
 * Kills one replica outright, as losing it would on a cluster: its Deployment is deleted
 * (foreground) and its pod is gone when this resolves. The driver contract's `killReplica`.
 */
export async function killReplica(
  kubeconfig: string,
  instanceId: string,
  ordinal: number,
): Promise<void> {
  const config = new KubeConfig();
  config.loadFromString(kubeconfig);
  const api = new KubernetesApi(config);
  const name = replicaObjectName(instanceId, ordinal);
  const [deployment] = (
    await api.list(
      'apps/v1',
      'Deployment',
      `replix.dev/instance-id=${instanceId}`,
      INSTANCE_NAMESPACE,
    )
  ).filter((one) => one.metadata.name === name);
  if (!deployment) return;
  const ref = {
    apiVersion: 'apps/v1',
    kind: 'Deployment',
    namespace: deployment.metadata.namespace,
    name,
  };
  await api.delete(ref);
  for (let waited = 0; (await api.get(ref)) !== null; waited += 100) {
    if (waited > 60_000) throw new Error(`replica ${ordinal} of ${instanceId} did not go`);
    await new Promise((resolve) => setTimeout(resolve, 100));
  }
}

/** The instance namespace of the tests' region (eu-west-1 under `replix-{region}`). */
export const INSTANCE_NAMESPACE = 'replix-eu-west-1';

/**
 * Creates the namespaces as the operator does (docs/deploy/kubernetes.md#namespaces): the
 * driver never creates one. Applied under the field manager `operator`.
 */
export async function createOperatorNamespaces(
  kubeconfig: string,
  names: readonly string[] = [INSTANCE_NAMESPACE],
): Promise<void> {
  const config = new KubeConfig();
  config.loadFromString(kubeconfig);
  const api = new KubernetesApi(config);
  for (const name of names) {
    await api.apply(
      {
        apiVersion: 'v1',
        kind: 'Namespace',
        metadata: { name, labels: { 'app.kubernetes.io/part-of': 'replix' } },
      } as unknown as Parameters<KubernetesApi['apply']>[0],
      'operator',
    );
  }
}

const FAKE_INSTANCE = fileURLToPath(new URL('./fixtures/fake-instance.mjs', import.meta.url));

/**
 * A Kubernetes driver for the fake API server whose instances are a stand-in program
 * (fixtures/fake-instance.mjs) delivered as an image, in region eu-west-1 behind an Ingress:
 * for tests of what the driver applies and reads, not of the real instance.
 */
export function standInDriver(
  kubeconfig: string,
  options: Partial<ConstructorParameters<typeof KubernetesDriver>[0]> = {},
): KubernetesDriver {
  const kubeConfig = new KubeConfig();
  kubeConfig.loadFromString(kubeconfig);
  return new KubernetesDriver({
    api: new KubernetesApi(kubeConfig),
    log: pino({ level: 'silent' }),
    instances: {
      image: 'replix-runtime:test',
      replixBin: FAKE_INSTANCE,
      namespacePattern: 'replix-{region}',
    },
    endpoints: {
      hostPatterns: { 'eu-west-1': '{database}.eu-west-1.db.test' },
      route: { kind: 'ingress', ingressClassName: 'test' },
      scheme: 'http',
    },
    artifactDelivery: async () => ({ kind: 'image', imageUri: 'replix-build:test' }),
    placeOf: async () => ({ accountId: 'ac-1', region: 'eu-west-1' }),
    ...options,
  });
}
