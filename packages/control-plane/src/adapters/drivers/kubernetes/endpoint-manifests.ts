import {
  databaseObjectName,
  instancePodSelector,
  LABELS,
  namespaceFor,
  objectLabels,
} from './kubernetes-names.ts';
import type { KubernetesObject } from './kubernetes-object.ts';
import { UNROUTED_NAME, UNROUTED_SERVICE_PORT } from './unrouted-backend.ts';

/** How users reach a database's endpoint from outside the cluster. */
export type EndpointRoute =
  | {
      readonly kind: 'httproute';
      /** The Gateway API Gateway the routes attach to. */
      readonly gateway: { readonly name: string; readonly namespace: string };
    }
  | { readonly kind: 'ingress'; readonly ingressClassName: string };

export interface EndpointManifestOptions {
  readonly namespacePattern: string;
  /**
   * The endpoint's host in each region, `{database}` standing for the database's DNS label:
   * `{database}.eu-west-1.db.example.com`.
   */
  readonly hostPatterns: Readonly<Record<string, string>>;
  readonly route: EndpointRoute;
}

export interface EndpointInput {
  readonly accountId: string;
  readonly databaseId: string;
  readonly region: string;
  /**
   * The instance whose pods serve the database now (`Driver.route`); null while unrouted: the
   * route then sends requests to the namespace's unrouted server (unrouted-backend.ts).
   */
  readonly servingInstanceId: string | null;
}

/** The port the database's Service listens on. */
export const SERVICE_PORT = 80;
const DNS_SUBDOMAIN =
  /^(?=.{1,253}$)[a-z0-9]([-a-z0-9]*[a-z0-9])?(\.[a-z0-9]([-a-z0-9]*[a-z0-9])?)*$/;

/** The database's endpoint host in its region, from the region's pattern. */
export function endpointHost(options: EndpointManifestOptions, input: EndpointInput): string {
  const pattern = options.hostPatterns[input.region];
  if (pattern === undefined)
    throw new Error(`No endpoint host pattern for region ${input.region}.`);
  // Without the database in it, every database of the region would share one host.
  if (!pattern.includes('{database}')) {
    throw new Error(`The host pattern of region ${input.region} must contain {database}.`);
  }
  const host = pattern.replaceAll('{database}', databaseObjectName(input.databaseId));
  if (!DNS_SUBDOMAIN.test(host) || host.split('.').some((label) => label.length > 63)) {
    throw new Error(`The host pattern of region ${input.region} does not give a DNS name.`);
  }
  return host;
}

function metadataOf(input: EndpointInput, options: EndpointManifestOptions) {
  return {
    name: databaseObjectName(input.databaseId),
    namespace: namespaceFor(options.namespacePattern, input),
    labels: objectLabels({ accountId: input.accountId, databaseId: input.databaseId }, 'endpoint'),
  };
}

/** A selector no pod matches: the database Service of an unrouted database. */
const NO_POD = { [LABELS.managedBy]: 'replix', 'replix.dev/unrouted': 'true' };

/**
 * The database's Service: one stable ClusterIP for the database's life, selecting the serving
 * instance's pods (all its replicas). Routing to another instance changes only its selector;
 * requests under way stay on the old pods, which drain before they stop.
 */
export function databaseService(
  input: EndpointInput,
  options: EndpointManifestOptions,
): KubernetesObject {
  return {
    apiVersion: 'v1',
    kind: 'Service',
    metadata: metadataOf(input, options),
    spec: {
      type: 'ClusterIP',
      selector:
        input.servingInstanceId === null
          ? NO_POD
          : instancePodSelector(input.databaseId, input.servingInstanceId),
      ports: [{ name: 'http', port: SERVICE_PORT, targetPort: 'http', protocol: 'TCP' }],
    },
  };
}

/** The route from the database's host to its Service: an HTTPRoute, or an Ingress. */
export function databaseRoute(
  input: EndpointInput,
  options: EndpointManifestOptions,
): KubernetesObject {
  const metadata = metadataOf(input, options);
  const host = endpointHost(options, input);
  // Unrouted: the namespace's unrouted server answers 503 with the database's message.
  const backend =
    input.servingInstanceId === null
      ? { name: UNROUTED_NAME, port: UNROUTED_SERVICE_PORT }
      : { name: metadata.name, port: SERVICE_PORT };
  if (options.route.kind === 'ingress') {
    return {
      apiVersion: 'networking.k8s.io/v1',
      kind: 'Ingress',
      metadata,
      spec: {
        ingressClassName: options.route.ingressClassName,
        rules: [
          {
            host,
            http: {
              paths: [
                {
                  path: '/',
                  pathType: 'Prefix',
                  backend: { service: { name: backend.name, port: { number: backend.port } } },
                },
              ],
            },
          },
        ],
      },
    };
  }
  return {
    apiVersion: 'gateway.networking.k8s.io/v1',
    kind: 'HTTPRoute',
    metadata,
    spec: {
      parentRefs: [
        {
          group: 'gateway.networking.k8s.io',
          kind: 'Gateway',
          name: options.route.gateway.name,
          namespace: options.route.gateway.namespace,
        },
      ],
      hostnames: [host],
      rules: [
        {
          matches: [{ path: { type: 'PathPrefix', value: '/' } }],
          backendRefs: [{ kind: 'Service', name: backend.name, port: backend.port }],
        },
      ],
    },
  };
}

/** The database's endpoint objects, in apply order. */
export function endpointManifests(
  input: EndpointInput,
  options: EndpointManifestOptions,
): KubernetesObject[] {
  return [databaseService(input, options), databaseRoute(input, options)];
}
