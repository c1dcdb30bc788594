/**
 * Every Kubernetes API call the Kubernetes driver makes, as RBAC rules: the service account of
 * the control plane's `reconciler` role needs exactly these (the chart's ClusterRole is
 * written from this list, and a test checks they match). Cluster-wide, because an instance's
 * namespace comes from the operator's pattern (`replix-{region}` or per account) and the driver
 * finds an instance's objects by label across namespaces (stop, reap, logs after a restart).
 *
 * The driver writes only with server-side apply (a PATCH); an apply that creates the object is
 * authorized as `create` too, so every applied resource has both. It never sends POST, PUT or
 * a watch, and reads Events only to explain a failed rollout and as infra log lines.
 */
export interface KubernetesPermission {
  /** The API group: '' for the core group. */
  readonly apiGroup: string;
  /** The resource as RBAC names it (`pods/log` for a subresource). */
  readonly resource: string;
  readonly verbs: readonly ('get' | 'list' | 'create' | 'patch' | 'delete')[];
}

export const KUBERNETES_PERMISSIONS: readonly KubernetesPermission[] = [
  // The instance namespaces, applied before the first object in them.
  { apiGroup: '', resource: 'namespaces', verbs: ['create', 'patch'] },
  // Launch secrets and the key set (the keys file), owned by the replica-0 Deployment.
  { apiGroup: '', resource: 'secrets', verbs: ['list', 'create', 'patch', 'delete'] },
  // The unrouted server's messages, one key per unrouted database (unrouted-backend.ts).
  { apiGroup: '', resource: 'configmaps', verbs: ['create', 'patch'] },
  // Per-instance Services (privateUrl) and the database Services (the switch).
  { apiGroup: '', resource: 'services', verbs: ['get', 'list', 'create', 'patch', 'delete'] },
  {
    apiGroup: 'apps',
    resource: 'deployments',
    verbs: ['get', 'list', 'create', 'patch', 'delete'],
  },
  // Replica addresses and liveness, and whose logs to read.
  { apiGroup: '', resource: 'pods', verbs: ['list'] },
  { apiGroup: '', resource: 'pods/log', verbs: ['get'] },
  // Why a rollout fails, and the infra lines of readLogs.
  { apiGroup: '', resource: 'events', verbs: ['list'] },
  {
    apiGroup: 'gateway.networking.k8s.io',
    resource: 'httproutes',
    verbs: ['list', 'create', 'patch', 'delete'],
  },
  {
    apiGroup: 'networking.k8s.io',
    resource: 'ingresses',
    verbs: ['list', 'create', 'patch', 'delete'],
  },
];

/**
 * The calls of `readLogs` alone (pods and their Deployments by label, each pod's log, the
 * namespace's Events): the `api` role serves `instance-logs` through it and needs no more
 * (deploy/kubernetes/rbac.yaml gives it exactly these; each is one of KUBERNETES_PERMISSIONS).
 */
export const LOG_READ_PERMISSIONS: readonly KubernetesPermission[] = [
  { apiGroup: '', resource: 'pods', verbs: ['list'] },
  { apiGroup: '', resource: 'pods/log', verbs: ['get'] },
  { apiGroup: 'apps', resource: 'deployments', verbs: ['list'] },
  { apiGroup: '', resource: 'events', verbs: ['list'] },
];

/**
 * The API calls of the `builder` role with the Kubernetes driver (kubernetes-build-runner.ts):
 * it applies each build's Job, reads it until it ends, and deletes an earlier attempt's Job of
 * the same build. Only in the build namespace (`REPLIX_K8S_BUILD_NAMESPACE`), so a Role there
 * is enough; the Jobs mount the artifacts claim and read the store Secret as pods, not
 * through the builder's account.
 */
export const BUILDER_PERMISSIONS: readonly KubernetesPermission[] = [
  { apiGroup: 'batch', resource: 'jobs', verbs: ['get', 'list', 'create', 'patch', 'delete'] },
];
