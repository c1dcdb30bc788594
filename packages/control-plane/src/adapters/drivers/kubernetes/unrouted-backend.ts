import { sharedLabels } from './kubernetes-names.ts';
import type { KubernetesObject } from './kubernetes-object.ts';
import { CONTAINER_SECURITY, POD_SECURITY } from './pod-security.ts';
import { programSource } from './program-source.ts';

/**
 * What an unrouted endpoint answers (`Driver.unroute`): 503 with the spec's envelope and the
 * message of the database's state.
 *
 * Design note: every instance namespace runs one small `replix-unrouted` Deployment and
 * Service of its own; an unrouted database's HTTPRoute or Ingress points at that Service
 * instead of the database's. The message lives in the namespace's `replix-unrouted` ConfigMap
 * under the endpoint's host, mounted into those pods, which answer each request with the
 * message for its `Host` (a generic one for an unknown host). So the gateway needs nothing
 * beyond same-namespace backends (no ReferenceGrant, no ExternalName, no header filters, none
 * of which Ingress has portably), the control plane's own pods are never on the users' path,
 * and the answer comes from inside the cluster even while the control plane is down. Each
 * database applies its own ConfigMap key under its own field manager, so databases of one
 * namespace never drop each other's messages. A changed message reaches the pods when the
 * kubelet syncs the volume (up to a minute on a real cluster); the switch of the route itself is
 * immediate.
 */
export const UNROUTED_NAME = 'replix-unrouted';
export const UNROUTED_SERVICE_PORT = 80;
const UNROUTED_PORT = 8080;
const MESSAGES_DIR = '/etc/replix/unrouted';

/** The unrouted server: `programs/unrouted-server.ts` (listen address and port as arguments). */
export const unroutedScript = programSource(
  new URL('./programs/unrouted-server.ts', import.meta.url),
);

export interface UnroutedOptions {
  readonly image: string;
  readonly imagePullPolicy?: 'Always' | 'IfNotPresent' | 'Never';
}

function metadataOf(namespace: string) {
  return { name: UNROUTED_NAME, namespace, labels: sharedLabels('unrouted') };
}

/** The pods' selector: the unrouted server of this namespace. */
const selector = {
  'app.kubernetes.io/name': UNROUTED_NAME,
  'app.kubernetes.io/managed-by': 'replix',
};

/** The namespace's unrouted server: its Deployment and Service, in apply order. */
export function unroutedManifests(namespace: string, options: UnroutedOptions): KubernetesObject[] {
  const metadata = metadataOf(namespace);
  const deployment: KubernetesObject = {
    apiVersion: 'apps/v1',
    kind: 'Deployment',
    metadata,
    spec: {
      replicas: 2,
      revisionHistoryLimit: 1,
      selector: { matchLabels: selector },
      strategy: { type: 'RollingUpdate', rollingUpdate: { maxSurge: 1, maxUnavailable: 0 } },
      template: {
        metadata: { labels: metadata.labels },
        spec: {
          automountServiceAccountToken: false,
          enableServiceLinks: false,
          securityContext: POD_SECURITY,
          containers: [
            {
              name: 'unrouted',
              image: options.image,
              ...(options.imagePullPolicy ? { imagePullPolicy: options.imagePullPolicy } : {}),
              command: [
                'node',
                '--input-type=module',
                '-e',
                unroutedScript(),
                '0.0.0.0',
                String(UNROUTED_PORT),
              ],
              env: [{ name: 'REPLIX_UNROUTED_DIR', value: MESSAGES_DIR }],
              ports: [{ name: 'http', containerPort: UNROUTED_PORT, protocol: 'TCP' }],
              readinessProbe: { tcpSocket: { port: 'http' }, periodSeconds: 2 },
              resources: {
                requests: { cpu: '10m', memory: '32Mi' },
                limits: { cpu: '100m', memory: '64Mi' },
              },
              securityContext: CONTAINER_SECURITY,
              volumeMounts: [{ name: 'messages', mountPath: MESSAGES_DIR, readOnly: true }],
            },
          ],
          volumes: [
            // optional: the pods start before any database of the namespace is unrouted.
            { name: 'messages', configMap: { name: UNROUTED_NAME, optional: true } },
          ],
        },
      },
    },
  };
  const service: KubernetesObject = {
    apiVersion: 'v1',
    kind: 'Service',
    metadata,
    spec: {
      type: 'ClusterIP',
      selector,
      ports: [{ name: 'http', port: UNROUTED_SERVICE_PORT, targetPort: 'http', protocol: 'TCP' }],
    },
  };
  return [deployment, service];
}

/**
 * The database's key of the namespace's message ConfigMap, applied under `messageManager`:
 * its message while unrouted, no key (null) while routed or closed.
 */
export function unroutedMessageConfigMap(
  namespace: string,
  host: string,
  message: string | null,
): KubernetesObject {
  return {
    apiVersion: 'v1',
    kind: 'ConfigMap',
    metadata: metadataOf(namespace),
    data: message === null ? {} : { [host]: message },
  };
}

/** The field manager of one database's message key. */
export function messageManager(databaseObjectName: string): string {
  return `replix-endpoint-${databaseObjectName}`;
}
