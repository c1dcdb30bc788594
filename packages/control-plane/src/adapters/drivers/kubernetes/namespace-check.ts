import { ApiException } from '@kubernetes/client-node';

/**
 * A namespace the driver needs that it cannot write to: missing, or without the Role and
 * RoleBinding that let the control plane's account write there. The driver never creates
 * namespaces (it holds no cluster-wide rights), so only the operator can fix this.
 */
export class NamespaceUnavailableError extends Error {
  readonly namespace: string;

  constructor(namespace: string, status: number) {
    super(
      `The Kubernetes namespace "${namespace}" is ${status === 404 ? 'missing' : 'not writable by the control plane (HTTP 403)'}: create it with the Role and RoleBinding of deploy/kubernetes (one namespace per region of REPLIX_K8S_ENDPOINT_HOSTS, named by REPLIX_K8S_NAMESPACE_PATTERN; docs/deploy/kubernetes.md#namespaces).`,
    );
    this.name = 'NamespaceUnavailableError';
    this.namespace = namespace;
  }
}

/**
 * The error of a write into `namespace` as a NamespaceUnavailableError when it means the
 * namespace is missing (404 naming the namespace) or closed to us (403); undefined otherwise.
 * Without a RoleBinding in a namespace that does not exist, a real API server answers 403
 * before it looks for the namespace.
 */
export function namespaceUnavailable(
  error: unknown,
  namespace: string,
): NamespaceUnavailableError | undefined {
  if (!(error instanceof ApiException)) return undefined;
  if (error.code === 403) return new NamespaceUnavailableError(namespace, 403);
  if (error.code !== 404) return undefined;
  const details = statusDetails(error.body);
  return details?.kind === 'namespaces' && details.name === namespace
    ? new NamespaceUnavailableError(namespace, 404)
    : undefined;
}

/** `details` of a Kubernetes Status body (a string or already parsed). */
function statusDetails(body: unknown): { kind?: string; name?: string } | undefined {
  let status: unknown = body;
  if (typeof body === 'string') {
    try {
      status = JSON.parse(body);
    } catch {
      return undefined;
    }
  }
  return (status as { details?: { kind?: string; name?: string } } | null)?.details;
}
