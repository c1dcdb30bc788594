/**
 * A loopback fake Kubernetes API server for tests: `@kubernetes/client-node` and `kubectl`
 * talk to it as to a cluster, and a test asserts which calls a client made (`requests`).
 *
 * Faithful: the REST paths of the kinds the driver's manifests use (core/v1 Namespace,
 * Secret, ConfigMap, Service, Pod, Event; apps/v1 Deployment; batch/v1 Job;
 * policy/v1 PodDisruptionBudget (stored only: nothing evicts); networking.k8s.io/v1 Ingress; gateway.networking.k8s.io/v1 HTTPRoute) and legacy discovery
 * (`/api`, `/apis`, group versions, `/version`); server-side apply (`PATCH` with
 * `application/apply-patch+yaml`, `fieldManager`, `force`) creating or merging, dropping
 * fields a manager no longer applies, `metadata.managedFields` per manager in FieldsV1 form,
 * 409 `Conflict` with `FieldManagerConflict` causes when another manager owns a field with a
 * different value; `resourceVersion` and `generation` bumped on change only; `uid`,
 * `creationTimestamp`; get, list with `labelSelector` (`=`, `==`, `!=`, `in`, `notin`,
 * exists); delete with `propagationPolicy` (Job defaults to Orphan, as the API server does)
 * and `gracePeriodSeconds`; watch of a list (ADDED/MODIFIED/DELETED lines); failures as
 * `Status` objects (400, 404, 405, 409, 415, 422); pod logs with `sinceTime`,
 * `sinceSeconds`, `tailLines`, `timestamps`, `container`.
 *
 * Two modes. By default a `SimulatedController` makes Deployment pods "ready" after
 * `readyDelayMs` without running anything (`failDeployment`, `finishJob` and `appendLog`
 * steer it), and deletion is immediate. With `runPods: true` a local cluster runs instead:
 *
 * - a kubelet (`local-kubelet.ts`, `local-pod.ts`) runs every Pod as local processes, each
 *   pod on its own loopback address (`status.podIP`, 127.77.x.y; every `0.0.0.0` in an
 *   argument or env value becomes that address, so two pods can both listen on port 8080). `command` +
 *   `args` run as given (no images; `node` is the Node running the tests; a container without
 *   `command` cannot start); `env` from `value` (with `$(VAR)`), `secretKeyRef`,
 *   `configMapKeyRef`, `envFrom` and `fieldRef` (`metadata.name`, `metadata.namespace`,
 *   `metadata.uid`, `status.podIP`); a missing Secret or key leaves the container waiting in
 *   CreateContainerConfigError with a Warning Event until it appears. Volumes: `emptyDir` a
 *   temp folder, `secret`/`configMap` the keys as files, rewritten atomically (the kubelet's
 *   `..data` symlink swap) when the object changes; since nothing can be mounted at an
 *   absolute path, each `volumeMounts[].mountPath` is rewritten to its folder wherever
 *   command, args, `workingDir` or env values name it (`mount-paths.ts`). Init containers run
 *   in order, each to success (a failing one keeps the pod Pending, restarted with back-off,
 *   or Failed under `restartPolicy: Never`). Probes (`httpGet`, `tcpSocket`) run every
 *   `probeIntervalMs`: a success counts at once, a failure only after `periodSeconds ×
 *   failureThreshold` of real time; readiness sets `Ready`/`containerStatuses[].ready`, a
 *   failed startup or liveness probe restarts the container. `restartPolicy` Always/OnFailure
 *   restart an exited container (back-off from 200 ms to 5 s; `restartCount`). Deleting a Pod
 *   (directly, by its owner, or its namespace) sets `deletionTimestamp` and takes it out of
 *   Services at once; then `lifecycle.preStop.sleep`, SIGTERM, and SIGKILL when
 *   `terminationGracePeriodSeconds` (or the delete's `gracePeriodSeconds`) are over; the Pod
 *   object goes when its processes have, so a `Foreground` delete of a Deployment (which
 *   waits with the `foregroundDeletion` finalizer) completes only then. Output lines are the
 *   pod log, per container, with their time. `close()` SIGKILLs every process group it started.
 * - Deployment and Job controllers (`local-deployments.ts`, `local-jobs.ts`): pods of the
 *   template, a changed template rolled out within maxSurge/maxUnavailable (old pods deleted
 *   only while enough ready ones remain) or `Recreate`; status `replicas`, `updatedReplicas`,
 *   `readyReplicas`, `availableReplicas`, `unavailableReplicas` (zeros left out, as the API
 *   server does), `observedGeneration`, conditions `Available` and `Progressing`
 *   (ProgressDeadlineExceeded after `spec.progressDeadlineSeconds`, 600 by default, capped by
 *   the `progressDeadlineMs` option). A Job runs one pod at a time until one succeeds
 *   (Complete), more than `backoffLimit` failed or `activeDeadlineSeconds` passed (Failed),
 *   and goes `ttlSecondsAfterFinished` after it finished.
 * - a kube-proxy (`local-kube-proxy.ts`): a Service gets `spec.clusterIP` (127.88.x.y) when it
 *   is created, and a TCP listener per port that sends each new connection to a ready pod of
 *   the selector as it is at that moment (round-robin; `targetPort` by number or container
 *   port name); no ready pod closes the connection.
 * - a gateway (`local-gateway.ts`) on `gatewayUrl`: by `Host` (and path) to the Service of a
 *   matching HTTPRoute or Ingress, streamed; 404 without a route, 503 without a ready pod.
 *
 * Simplified: lists in a configuration are atomic fields (no keyed merge of containers by
 * name); no defaulting (but a Service's clusterIP with runPods), no schema validation beyond
 * names; without runPods deletion is immediate; Deployments own their Pods directly (no
 * ReplicaSets); a watch keeps no history (no 410 Gone, no bookmarks, no DELETED when a label
 * change leaves the selector); in runPods mode a `persistentVolumeClaim` volume is bound at
 * once to a local folder per namespace and claim (no PersistentVolumeClaim object, storage
 * class or access mode is checked); no POST/PUT/merge patches, no authentication, no aggregated
 * discovery or OpenAPI documents; runPods ignores images, resources and security contexts,
 * and runs processes as the test's user.
 */
import { createServer } from 'node:http';
import type { AddressInfo } from 'node:net';
import { resourceByKind } from './api-resources.ts';
import { ApiRoutes, type RecordedRequest } from './api-routes.ts';
import { LocalDeploymentController } from './local-deployments.ts';
import { LocalGateway } from './local-gateway.ts';
import { LocalJobController } from './local-jobs.ts';
import { LocalKubeProxy } from './local-kube-proxy.ts';
import { LocalKubelet } from './local-kubelet.ts';
import { ObjectStore, type StoredObject } from './object-store.ts';
import { PodLogs } from './pod-logs.ts';
import { ServiceEndpoints } from './service-endpoints.ts';
import { type ControllerOptions, SimulatedController } from './simulated-controller.ts';

export type { RecordedRequest } from './api-routes.ts';
export type { StoredObject } from './object-store.ts';

export interface FakeKubernetesOptions extends ControllerOptions {
  /**
   * Runs every Pod as real local processes (a local kubelet, kube-proxy and gateway) instead
   * of the simulated controller: see `local-kubelet.ts`, `local-pod.ts`,
   * `local-deployments.ts`, `local-kube-proxy.ts` and `local-gateway.ts`. `readyDelayMs`,
   * `failDeployment` and `finishJob` belong to the simulated mode.
   */
  readonly runPods?: boolean;
  /** runPods: how often probes run at most; 100 ms unless set. */
  readonly probeIntervalMs?: number;
  /** runPods: caps each Deployment's `spec.progressDeadlineSeconds` (600 s by default). */
  readonly progressDeadlineMs?: number;
  /**
   * runPods: `<namespace>/<claim name>` → the local folder that PersistentVolumeClaim stands
   * for (a test's data folder); other claims get a folder of their own (`claimDir`).
   */
  readonly claimDirs?: Readonly<Record<string, string>>;
}

export interface FakeKubernetes {
  /** `http://127.0.0.1:<port>` */
  readonly url: string;
  /** A kubeconfig (YAML) whose current context is this server, for either client. */
  readonly kubeconfig: string;
  /**
   * runPods: the gateway's `http://127.0.0.1:<port>`, routing by `Host` to the Services of
   * HTTPRoutes and Ingresses; undefined in the simulated mode.
   */
  readonly gatewayUrl: string | undefined;
  /** Every request received, in order. */
  readonly requests: readonly RecordedRequest[];
  /**
   * runPods: the local folder of a namespace's PersistentVolumeClaim, which every pod
   * mounting it shares (`claimDirs`, or one of its own); throws in the simulated mode.
   */
  claimDir(namespace: string, claimName: string): string;
  /** The stored object, for assertions without going through a client; undefined when absent. */
  object(kind: string, namespace: string | undefined, name: string): StoredObject | undefined;
  /** The Deployment never becomes ready (its rollout reports ProgressDeadlineExceeded). */
  failDeployment(namespace: string, name: string): void;
  /** Ends the Job with this outcome. */
  finishJob(namespace: string, name: string, outcome: 'succeeded' | 'failed'): void;
  /** A line the pod wrote, as its log returns it. */
  appendLog(namespace: string, pod: string, line: string, time?: Date): void;
  close(): Promise<void>;
}

export async function startFakeKubernetes(
  options: FakeKubernetesOptions = {},
): Promise<FakeKubernetes> {
  const store = new ObjectStore();
  const logs = new PodLogs();
  const local = options.runPods ? await startLocalCluster(store, logs, options) : undefined;
  const controller = local ? undefined : new SimulatedController(store, logs, options);
  const simulated = (what: string) => {
    if (!controller)
      throw new Error(`${what} belongs to the simulated mode: with runPods, pods really run`);
    return controller;
  };
  const requests: RecordedRequest[] = [];
  const routes = new ApiRoutes(store, logs, (request) => requests.push(request));
  const server = createServer((request, response) => void routes.handle(request, response));
  await new Promise<void>((resolve) => server.listen(0, '127.0.0.1', resolve));
  const url = `http://127.0.0.1:${(server.address() as AddressInfo).port}`;
  return {
    url,
    kubeconfig: kubeconfigFor(url),
    gatewayUrl: local?.gatewayUrl,
    requests,
    claimDir(namespace, claimName) {
      if (!local) throw new Error('claimDir belongs to the runPods mode');
      return local.kubelet.claimDir(namespace, claimName);
    },
    object(kind, namespace, name) {
      try {
        return store.get(resourceByKind(kind), namespace, name);
      } catch {
        return undefined;
      }
    },
    failDeployment: (namespace, name) =>
      simulated('failDeployment').failDeployment(namespace, name),
    finishJob: (namespace, name, outcome) =>
      simulated('finishJob').finishJob(namespace, name, outcome),
    appendLog: (namespace, pod, line, time) => logs.append(namespace, pod, line, time),
    async close() {
      controller?.stop();
      server.closeAllConnections();
      await new Promise<void>((resolve) => server.close(() => resolve()));
      await local?.close();
    },
  };
}

/** The kubelet, controllers, kube-proxy and gateway of the `runPods` mode. */
async function startLocalCluster(
  store: ObjectStore,
  logs: PodLogs,
  options: FakeKubernetesOptions,
) {
  const kubelet = new LocalKubelet(store, logs, options);
  const deployments = new LocalDeploymentController(store, options);
  const jobs = new LocalJobController(store);
  const endpoints = new ServiceEndpoints(store);
  const proxy = new LocalKubeProxy(store, endpoints);
  const gateway = new LocalGateway(store, endpoints);
  const gatewayUrl = await gateway.listen();
  return {
    gatewayUrl,
    kubelet,
    async close() {
      deployments.stop();
      jobs.stop();
      await Promise.all([proxy.close(), gateway.close()]);
      await kubelet.close();
    },
  };
}

function kubeconfigFor(url: string): string {
  return [
    'apiVersion: v1',
    'kind: Config',
    'clusters:',
    '- name: fake',
    '  cluster:',
    `    server: ${url}`,
    // client-node refuses plain HTTP unless TLS verification is off; there is no TLS here.
    '    insecure-skip-tls-verify: true',
    'users:',
    '- name: fake',
    '  user: {}',
    'contexts:',
    '- name: fake',
    '  context:',
    '    cluster: fake',
    '    user: fake',
    'current-context: fake',
    '',
  ].join('\n');
}
