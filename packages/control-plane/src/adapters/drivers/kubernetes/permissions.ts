/**
 * Every Kubernetes API call the Kubernetes driver makes, as RBAC rules: the service account of
 * the control plane's `reconciler` role needs exactly these (deploy/kubernetes/rbac.yaml is
 * generated from this list by tools/kubernetes-rbac.ts, and a test checks they match).
 *
 * All of them are namespaced, granted by a Role in each instance namespace: the operator
 * creates those namespaces (one per region, `REPLIX_K8S_NAMESPACE_PATTERN`), and the driver
 * lists and writes only in them, never cluster-wide. Nothing is granted on namespaces or any
 * other cluster-scoped kind.
 *
 * The driver writes only with server-side apply (a PATCH); an apply that creates the object is
 * authorized as `create` too, so every applied resource has both. It never sends POST, PUT or
 * a watch, and reads Events only to explain a failed rollout and as infra log lines. It never
 * reads a Secret: it applies and deletes its own by name.
 */
export interface KubernetesPermission {
  /** The API group: '' for the core group. */
  readonly apiGroup: string;
  /** The resource as RBAC names it (`pods/log` for a subresource). */
  readonly resource: string;
  readonly verbs: readonly ('get' | 'list' | 'create' | 'patch' | 'delete')[];
}

export const KUBERNETES_PERMISSIONS: readonly KubernetesPermission[] = [
  // Launch secrets and the key set (the keys file), owned by the replica-0 Deployment; applied
  // and deleted by name, never read back (updateKeys takes their metadata from the Service).
  { apiGroup: '', resource: 'secrets', verbs: ['create', 'patch', 'delete'] },
  // The unrouted server's messages, one key per unrouted database (unrouted-backend.ts).
  { apiGroup: '', resource: 'configmaps', verbs: ['create', 'patch'] },
  // Per-instance Services (privateUrl) and the database Services (the switch).
  { apiGroup: '', resource: 'services', verbs: ['get', 'list', 'create', 'patch', 'delete'] },
  {
    apiGroup: 'apps',
    resource: 'deployments',
    verbs: ['get', 'list', 'create', 'patch', 'delete'],
  },
  // An instance's budget of replicas a drain may evict at once (instance-spread.ts).
  { apiGroup: 'policy', resource: 'poddisruptionbudgets', verbs: ['create', 'patch', 'delete'] },
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
 * (a Role in each instance namespace gives it exactly these; each is one of
 * KUBERNETES_PERMISSIONS).
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
 * the same build; and it applies each Job's credential Secret (build-credential.ts), owned by
 * the Job, and deletes it when the build ends. Only in the build namespace
 * (`REPLIX_K8S_BUILD_NAMESPACE`), so a Role there is enough. No `get` or `list` on Secrets:
 * the builder never reads one; the Jobs mount the artifacts claim and read the store Secret
 * as pods, not through the builder's account.
 */
export const BUILDER_PERMISSIONS: readonly KubernetesPermission[] = [
  { apiGroup: 'batch', resource: 'jobs', verbs: ['get', 'list', 'create', 'patch', 'delete'] },
  { apiGroup: '', resource: 'secrets', verbs: ['create', 'patch', 'delete'] },
];
