/** One kind the fake serves: where it lives in the REST paths and how discovery names it. */
export interface ApiResource {
  readonly group: string;
  readonly version: string;
  readonly kind: string;
  /** The plural the REST paths use. */
  readonly plural: string;
  readonly namespaced: boolean;
  readonly shortNames?: readonly string[];
  /** Pods and Events are made by the fake's controllers; clients only read (and delete) them. */
  readonly readOnly?: boolean;
  /** Kinds with a spec the API server counts changes of in `metadata.generation`. */
  readonly generation?: boolean;
}

/** The kinds the Kubernetes driver's manifests use, and the Pods the controller makes. */
export const API_RESOURCES: readonly ApiResource[] = [
  {
    group: '',
    version: 'v1',
    kind: 'Namespace',
    plural: 'namespaces',
    namespaced: false,
    shortNames: ['ns'],
  },
  { group: '', version: 'v1', kind: 'Secret', plural: 'secrets', namespaced: true },
  {
    group: '',
    version: 'v1',
    kind: 'ConfigMap',
    plural: 'configmaps',
    namespaced: true,
    shortNames: ['cm'],
  },
  {
    group: '',
    version: 'v1',
    kind: 'Service',
    plural: 'services',
    namespaced: true,
    shortNames: ['svc'],
  },
  {
    group: '',
    version: 'v1',
    kind: 'Pod',
    plural: 'pods',
    namespaced: true,
    shortNames: ['po'],
    readOnly: true,
  },
  {
    group: '',
    version: 'v1',
    kind: 'Event',
    plural: 'events',
    namespaced: true,
    shortNames: ['ev'],
    readOnly: true,
  },
  {
    group: 'apps',
    version: 'v1',
    kind: 'Deployment',
    plural: 'deployments',
    namespaced: true,
    generation: true,
    shortNames: ['deploy'],
  },
  {
    group: 'batch',
    version: 'v1',
    kind: 'Job',
    plural: 'jobs',
    namespaced: true,
    generation: true,
  },
  {
    group: 'policy',
    version: 'v1',
    kind: 'PodDisruptionBudget',
    plural: 'poddisruptionbudgets',
    namespaced: true,
    generation: true,
    shortNames: ['pdb'],
  },
  {
    group: 'networking.k8s.io',
    version: 'v1',
    kind: 'Ingress',
    plural: 'ingresses',
    namespaced: true,
    generation: true,
    shortNames: ['ing'],
  },
  {
    group: 'gateway.networking.k8s.io',
    version: 'v1',
    kind: 'HTTPRoute',
    plural: 'httproutes',
    namespaced: true,
    generation: true,
  },
];

/** `apps/v1`, or `v1` for the core group. */
export function groupVersion(resource: Pick<ApiResource, 'group' | 'version'>): string {
  return resource.group === '' ? resource.version : `${resource.group}/${resource.version}`;
}

export function resourceByPath(groupVersionText: string, plural: string): ApiResource | undefined {
  return API_RESOURCES.find((r) => groupVersion(r) === groupVersionText && r.plural === plural);
}

export function resourceByKind(kind: string): ApiResource {
  const resource = API_RESOURCES.find((r) => r.kind === kind);
  if (!resource) throw new Error(`the fake serves no kind ${kind}`);
  return resource;
}
