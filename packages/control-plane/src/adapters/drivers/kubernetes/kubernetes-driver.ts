import { Buffer } from 'node:buffer';
import { request as httpRequest } from 'node:http';
import type { Logger } from 'pino';
import { unroutedMessage } from '../../../domain/endpoint-messages.ts';
import type { Driver, Endpoint, InstanceHandle, LogChunk, ReplicaState } from '../driver.ts';
import { type InstanceKeySet, keysFileText } from '../instance-key-set.ts';
import type { InstanceLaunch } from '../instance-launch.ts';
import { InstanceStartError, launchSecrets, redact } from '../instance-start-error.ts';
import { parseLogLine, TAIL_LINES } from '../log-file.ts';
import {
  databaseRoute,
  databaseService,
  type EndpointInput,
  type EndpointManifestOptions,
  endpointHost,
} from './endpoint-manifests.ts';
import {
  type ArtifactDelivery,
  INSTANCE_PORT,
  type InstanceManifestOptions,
  instanceManifests,
  KEYS_FILE_NAME,
  leaderService,
  REPLICAS_ANNOTATION,
} from './instance-manifests.ts';
import { instanceDisruptionBudget } from './instance-spread.ts';
import type { KubernetesApi, LiveObject, ObjectRef } from './kubernetes-api.ts';
import {
  databaseObjectName,
  instanceKeysName,
  instanceNamespaces,
  instanceObjectName,
  instanceSecretName,
  LABELS,
  labelValue,
  namespaceFor,
  replicaObjectName,
} from './kubernetes-names.ts';
import { type KubernetesObject, ownedBy, secretData } from './kubernetes-object.ts';
import {
  advance,
  compareTimes,
  decodeLogToken,
  encodeLogToken,
  type LogPositions,
  linesAfter,
  parseTimestampedLog,
  type SourcedLine,
  sinceSecondsOf,
} from './log-token.ts';
import { namespaceUnavailable } from './namespace-check.ts';
import { PollPauses } from './poll-pauses.ts';
import { podIp, podRuns, rolloutState } from './rollout-state.ts';
import {
  messageManager,
  UNROUTED_NAME,
  UNROUTED_SERVICE_PORT,
  unroutedManifests,
  unroutedMessageConfigMap,
} from './unrouted-backend.ts';

/** Where a database's objects go: its account and region name its namespace. */
export interface DatabasePlace {
  readonly accountId: string;
  readonly region: string;
}

export interface KubernetesDriverOptions {
  readonly api: KubernetesApi;
  readonly log: Logger;
  readonly instances: InstanceManifestOptions;
  readonly endpoints: Omit<EndpointManifestOptions, 'namespacePattern'> & {
    /** `https` (default) or `http`: the scheme of the endpoint URLs users get. */
    readonly scheme: 'http' | 'https';
  };
  /** How the launch's build reaches its pods (the artifact endpoint's URL and token, or an image). */
  readonly artifactDelivery: (launch: InstanceLaunch) => Promise<ArtifactDelivery>;
  /** The database's account and region (from the store). */
  readonly placeOf: (databaseId: string) => Promise<DatabasePlace>;
  /** How long `start` waits for every replica to become available; 180 s unless set. */
  readonly startTimeoutMs?: number;
  /** How long `stop` waits for the pods to be gone; 120 s unless set. */
  readonly stopTimeoutMs?: number;
}

const DEFAULT_START_TIMEOUT_MS = 180_000;
const DEFAULT_STOP_TIMEOUT_MS = 120_000;
const FIRST_POLL_MS = 100;
const MAX_POLL_MS = 2000;
/** Lines of a failed container's log quoted in the start error. */
const ERROR_LOG_LINES = 15;
/** At most this many lines per readLogs call after a token; the rest come next time. */
const MAX_PAGE_LINES = 1000;
const INSTANCE_CONTAINER = 'instance';
/** How long `unroute` waits for the unrouted server to answer the new message. */
const MESSAGE_WAIT_MS = 90_000;
const EVENTS_SOURCE = 'events';

/** Ordinals beyond this are never listed, whatever an annotation says. */
const MAX_REPLICAS = 64;

const sleep = (ms: number) => new Promise((resolve) => setTimeout(resolve, ms));

const DEPLOYMENT = { apiVersion: 'apps/v1', kind: 'Deployment' } as const;
const SERVICE = { apiVersion: 'v1', kind: 'Service' } as const;
const SECRET = { apiVersion: 'v1', kind: 'Secret' } as const;
const DISRUPTION_BUDGET = { apiVersion: 'policy/v1', kind: 'PodDisruptionBudget' } as const;

/** The label selector of everything Replix made for one instance, in any namespace. */
function instanceSelector(instanceId: string): string {
  return `${LABELS.managedBy}=replix,${LABELS.instanceId}=${labelValue(instanceId)}`;
}

function refOf(object: LiveObject): ObjectRef {
  return {
    apiVersion: object.apiVersion,
    kind: object.kind,
    namespace: object.metadata.namespace,
    name: object.metadata.name,
  };
}

function ordinalOf(object: LiveObject): number {
  return Number(object.metadata.labels?.[LABELS.replica] ?? Number.NaN);
}

/**
 * Runs instances on a Kubernetes cluster: per instance a Secret of launch secrets, a key-set
 * Secret mounted as the keys file, a ClusterIP Service (the `privateUrl`), one Deployment per
 * replica, and when the replicas follow replica 0 (a checkpoint bucket, several replicas) a
 * leader Service in front of replica 0 alone; all applied server-side as the `replix` field
 * manager with `force`, so every apply is idempotent and takes back fields someone else
 * changed. An instance of several replicas also gets a PodDisruptionBudget (instance-spread.ts).
 * Per database a Service (the switch between instances) and an HTTPRoute or Ingress for its
 * host. Everything carries the labels of kubernetes-names.ts; the driver finds an instance's
 * objects by label in the operator's namespaces (one per region, created by the operator: the
 * driver never creates a namespace and holds only namespaced Roles), so only `start` and the
 * endpoint methods need the database's place.
 *
 * The cluster, not this process, runs the instances: `shutdown` leaves them running (the next
 * control plane adopts them through `start` and routes them again, reconciler/restore-endpoints.ts).
 */
export class KubernetesDriver implements Driver {
  readonly name = 'kubernetes';
  readonly #api: KubernetesApi;
  readonly #log: Logger;
  readonly #options: KubernetesDriverOptions;
  readonly #places = new Map<string, DatabasePlace>();
  /** Namespaces whose unrouted server this driver applied since it was made. */
  readonly #namespaces = new Set<string>();
  /** The operator's namespaces: one per region of the endpoint host patterns. */
  readonly #allNamespaces: readonly string[];

  constructor(options: KubernetesDriverOptions) {
    this.#api = options.api;
    this.#log = options.log;
    this.#options = options;
    this.#allNamespaces = instanceNamespaces(
      options.instances.namespacePattern,
      Object.keys(options.endpoints.hostPatterns),
    );
  }

  /** Objects of a kind matching `selector` in every namespace of the driver (never cluster-wide). */
  async #listAll(apiVersion: string, kind: string, selector: string): Promise<LiveObject[]> {
    const found: LiveObject[] = [];
    for (const namespace of this.#allNamespaces) {
      found.push(...(await this.#api.list(apiVersion, kind, selector, namespace)));
    }
    return found;
  }

  async #placeOf(databaseId: string): Promise<DatabasePlace> {
    const known = this.#places.get(databaseId);
    if (known) return known;
    const place = await this.#options.placeOf(databaseId);
    this.#places.set(databaseId, place);
    return place;
  }

  /**
   * The place's namespace, with the unrouted server its endpoints fall back to applied. The
   * namespace is the operator's: when it is missing (or the Role that lets the driver write
   * there is), the first apply fails, and that becomes an error that says what to create.
   */
  async #namespace(place: DatabasePlace): Promise<string> {
    const namespace = namespaceFor(this.#options.instances.namespacePattern, place);
    if (this.#namespaces.has(namespace)) return namespace;
    for (const object of unroutedManifests(namespace, this.#options.instances)) {
      try {
        await this.#api.apply(object);
      } catch (error) {
        const unavailable = namespaceUnavailable(error, namespace);
        if (unavailable) {
          this.#log.error({ namespace }, unavailable.message);
          throw unavailable;
        }
        throw error;
      }
    }
    await this.#waitUnroutedServer(namespace);
    this.#namespaces.add(namespace);
    return namespace;
  }

  /** Waits until the namespace's unrouted server has a pod available to answer. */
  async #waitUnroutedServer(namespace: string): Promise<void> {
    const deadline = Date.now() + (this.#options.startTimeoutMs ?? DEFAULT_START_TIMEOUT_MS);
    const pauses = new PollPauses(FIRST_POLL_MS, MAX_POLL_MS);
    while (true) {
      const live = await this.#api.get({ ...DEPLOYMENT, namespace, name: UNROUTED_NAME });
      const status = (live?.status ?? {}) as { availableReplicas?: number };
      if ((status.availableReplicas ?? 0) >= 1) return;
      if (Date.now() > deadline) {
        throw new Error(`The unrouted server of namespace ${namespace} did not become available.`);
      }
      await sleep(pauses.next());
    }
  }

  async start(launch: InstanceLaunch): Promise<InstanceHandle> {
    const place = await this.#placeOf(launch.databaseId);
    const namespace = await this.#namespace(place);
    const artifact = await this.#options.artifactDelivery(launch);
    const base = { launch, ...place, replicas: launch.replicas, artifact };
    const firstName = replicaObjectName(launch.instanceId, 0);
    // Secrets and Services go with replica 0's Deployment: once it has a uid, they name it as
    // their owner. A first start applies the Secrets (and the leader Service) before it (its
    // pods need them) and again with the owner after.
    let owner = await this.#api.get({ ...DEPLOYMENT, namespace, name: firstName });
    const owned = (object: KubernetesObject) =>
      owner?.metadata.uid
        ? ownedBy(object, { ...DEPLOYMENT, name: firstName, uid: owner.metadata.uid })
        : object;
    const ownedBefore = owner !== null;
    // Replicas that follow reach replica 0 through the leader Service: applied first, so the
    // followers' Deployments can carry its cluster IP.
    const leader = leaderService(base, this.#options.instances);
    let leaderUrl: string | undefined;
    if (leader) {
      await this.#api.apply(owned(leader));
      const ip = await this.#clusterIp(namespace, leader.metadata.name);
      leaderUrl = `http://${ip}:${INSTANCE_PORT}`;
    }
    const objects = instanceManifests({ ...base, leaderUrl }, this.#options.instances);
    const [secret, keys, service] = objects as [
      KubernetesObject,
      KubernetesObject,
      KubernetesObject,
    ];
    const deployments = objects.filter((object) => object.kind === 'Deployment');
    for (const object of [secret, keys]) await this.#api.apply(owned(object));
    for (const deployment of deployments) {
      const applied = await this.#api.apply(deployment);
      if (deployment.metadata.name === firstName) owner = applied;
    }
    if (!ownedBefore) {
      for (const object of [secret, keys, ...(leader ? [leader] : [])]) {
        await this.#api.apply(owned(object));
      }
    }
    await this.#api.apply(owned(service));
    const budget = instanceDisruptionBudget(base, this.#options.instances);
    if (budget) await this.#api.apply(owned(budget));
    else await this.#api.delete({ ...DISRUPTION_BUDGET, namespace, name: service.metadata.name });
    await this.#removeReplicasFrom(launch.instanceId, namespace, launch.replicas);
    if (!leader) await this.#removeLeaderService(launch.instanceId, namespace);
    await this.#waitAvailable(launch, namespace, deployments);
    const clusterIp = await this.#clusterIp(namespace, service.metadata.name);
    this.#log.info({ instanceId: launch.instanceId, namespace }, 'instance available');
    return {
      instanceId: launch.instanceId,
      privateUrl: `http://${clusterIp}:${INSTANCE_PORT}`,
      containerRef: `kubernetes:${namespace}/${service.metadata.name}`,
      port: null,
      pid: null,
    };
  }

  /** Deletes the Deployments of replicas `replicas` and up (the instance was scaled down). */
  async #removeReplicasFrom(instanceId: string, namespace: string, replicas: number) {
    const existing = await this.#api.list(
      'apps/v1',
      'Deployment',
      instanceSelector(instanceId),
      namespace,
    );
    for (const deployment of existing) {
      if (!(ordinalOf(deployment) < replicas)) await this.#api.delete(refOf(deployment));
    }
  }

  /** Deletes the leader Service of an instance whose replicas no longer follow (scaled to one). */
  async #removeLeaderService(instanceId: string, namespace: string) {
    const name = replicaObjectName(instanceId, 0);
    const services = await this.#api.list('v1', 'Service', instanceSelector(instanceId), namespace);
    for (const service of services) {
      if (service.metadata.name === name) await this.#api.delete(refOf(service));
    }
  }

  /**
   * Polls (with backoff) until every replica's Deployment is available; throws an
   * InstanceStartError quoting the failed container's log (secrets blanked) when one fails.
   */
  async #waitAvailable(
    launch: InstanceLaunch,
    namespace: string,
    deployments: readonly KubernetesObject[],
  ): Promise<void> {
    const deadline = Date.now() + (this.#options.startTimeoutMs ?? DEFAULT_START_TIMEOUT_MS);
    const pauses = new PollPauses(FIRST_POLL_MS, MAX_POLL_MS);
    while (true) {
      let available = 0;
      for (const deployment of deployments) {
        const live = await this.#api.get({
          ...DEPLOYMENT,
          namespace,
          name: deployment.metadata.name,
        });
        if (!live) continue;
        const selector = (deployment.spec as { selector: { matchLabels: Record<string, string> } })
          .selector.matchLabels;
        const pods = await this.#api.list(
          'v1',
          'Pod',
          Object.entries(selector)
            .map(([key, value]) => `${key}=${value}`)
            .join(','),
          namespace,
        );
        const state = rolloutState(live, pods);
        if (state.kind === 'available') available += 1;
        if (state.kind === 'failed') {
          throw new InstanceStartError(await this.#failureMessage(launch, namespace, state, pods));
        }
      }
      if (available === deployments.length) return;
      if (Date.now() > deadline) {
        const seconds = Math.round(
          (this.#options.startTimeoutMs ?? DEFAULT_START_TIMEOUT_MS) / 1000,
        );
        const names = new Set(deployments.map((deployment) => deployment.metadata.name));
        const events = await this.#warnings(namespace, names);
        throw new InstanceStartError(
          redact(
            `The instance did not become ready within ${seconds} s.${events.length ? ` Recent events:\n${events.join('\n')}` : ''}`,
            launchSecrets(launch),
          ),
        );
      }
      await sleep(pauses.next());
    }
  }

  async #failureMessage(
    launch: InstanceLaunch,
    namespace: string,
    state: { reason: string; pod?: string; container?: string },
    pods: readonly LiveObject[],
  ): Promise<string> {
    let detail = '';
    if (state.pod && state.container) {
      const log = await this.#api.podLog(namespace, state.pod, {
        container: state.container,
        tailLines: ERROR_LOG_LINES,
      });
      const lines = parseTimestampedLog(state.pod, log).map((line) => line.message);
      if (lines.length) detail = ` Last log lines:\n${lines.join('\n')}`;
    } else {
      const names = new Set(pods.map((pod) => pod.metadata.name));
      for (const pod of pods) {
        for (const owner of pod.metadata.ownerReferences ?? []) names.add(owner.name);
      }
      const events = await this.#warnings(namespace, names);
      if (events.length) detail = ` Recent events:\n${events.join('\n')}`;
    }
    return redact(`${state.reason}${detail}`, launchSecrets(launch));
  }

  /** The instance's recent warning events (best effort: none when they cannot be read). */
  async #warnings(namespace: string, names: ReadonlySet<string>): Promise<string[]> {
    const lines = await this.#eventLines(namespace, names);
    return lines
      .filter((line) => line.message.startsWith('Warning '))
      .slice(-5)
      .map((line) => line.message);
  }

  /**
   * Events about the instance's Deployments and pods as log lines ("<type> <reason>: <message>").
   * Events are not labelled, so they are matched by the names of the instance's objects.
   */
  async #eventLines(namespace: string, names: ReadonlySet<string>): Promise<SourcedLine[]> {
    let events: LiveObject[];
    try {
      events = await this.#api.list('v1', 'Event', '', namespace);
    } catch {
      return [];
    }
    const lines: SourcedLine[] = [];
    for (const event of events) {
      const e = event as unknown as {
        involvedObject?: { name?: string };
        type?: string;
        reason?: string;
        message?: string;
        lastTimestamp?: string;
        eventTime?: string;
        firstTimestamp?: string;
      };
      const name = e.involvedObject?.name ?? '';
      if (!names.has(name)) continue;
      const time = e.lastTimestamp ?? e.eventTime ?? e.firstTimestamp;
      if (!time || Number.isNaN(Date.parse(time))) continue;
      lines.push({
        source: EVENTS_SOURCE,
        time,
        message: `${e.type ?? 'Normal'} ${e.reason ?? ''}: ${e.message ?? ''}`,
      });
    }
    return lines.sort((a, b) => compareTimes(a.time, b.time));
  }

  /** The Service's ClusterIP, read from the API (the API server assigns it on create). */
  async #clusterIp(namespace: string, name: string): Promise<string> {
    const deadline = Date.now() + 10_000;
    while (true) {
      const service = await this.#api.get({ ...SERVICE, namespace, name });
      const ip = (service?.spec as { clusterIP?: string } | undefined)?.clusterIP;
      if (ip && ip !== 'None') return ip;
      if (Date.now() > deadline) {
        throw new InstanceStartError("The instance's Service got no cluster IP.");
      }
      await sleep(FIRST_POLL_MS);
    }
  }

  /**
   * Deletes the instance's objects. Its Secrets and disruption budget go by name (the driver
   * may not list Secrets; both are owned by replica 0's Deployment too) in every namespace
   * the instance has objects in.
   */
  async stop(instanceId: string): Promise<void> {
    const selector = instanceSelector(instanceId);
    const deployments = await this.#listAll('apps/v1', 'Deployment', selector);
    for (const deployment of deployments) await this.#api.delete(refOf(deployment));
    const services = await this.#listAll('v1', 'Service', selector);
    for (const service of services) await this.#api.delete(refOf(service));
    const namespaces = new Set(
      [...deployments, ...services].map((object) => object.metadata.namespace),
    );
    for (const namespace of namespaces) {
      for (const name of [instanceSecretName(instanceId), instanceKeysName(instanceId)]) {
        await this.#api.delete({ ...SECRET, namespace, name });
      }
      await this.#api.delete({
        ...DISRUPTION_BUDGET,
        namespace,
        name: instanceObjectName(instanceId),
      });
    }
    const deadline = Date.now() + (this.#options.stopTimeoutMs ?? DEFAULT_STOP_TIMEOUT_MS);
    const pauses = new PollPauses(FIRST_POLL_MS, MAX_POLL_MS);
    while ((await this.#listAll('v1', 'Pod', selector)).length > 0) {
      if (Date.now() > deadline) {
        this.#log.warn({ instanceId }, 'instance pods still terminating after the stop timeout');
        return;
      }
      await sleep(pauses.next());
    }
    if (deployments.length > 0) this.#log.info({ instanceId }, 'instance stopped');
  }

  /** The replicas by ordinal, each with its Deployment's running pods. */
  /**
   * The instance's replicas by ordinal, each with its running pods: the count its Service
   * records (so a replica whose Deployment is gone is listed, not running) and any replica
   * Deployment found. A replica whose Deployment is being deleted has no running pod.
   */
  async #replicaPods(instanceId: string): Promise<Map<number, LiveObject[]>> {
    const selector = instanceSelector(instanceId);
    const byOrdinal = new Map<number, LiveObject[]>();
    const services = await this.#listAll('v1', 'Service', selector);
    const service = services.find((one) => one.metadata.name === instanceObjectName(instanceId));
    const count = Number(service?.metadata.annotations?.[REPLICAS_ANNOTATION] ?? 0);
    if (service && !service.metadata.deletionTimestamp && Number.isInteger(count)) {
      for (let ordinal = 0; ordinal < Math.min(count, MAX_REPLICAS); ordinal++) {
        byOrdinal.set(ordinal, []);
      }
    }
    const deployed = new Set<number>();
    for (const deployment of await this.#listAll('apps/v1', 'Deployment', selector)) {
      const ordinal = ordinalOf(deployment);
      if (!Number.isInteger(ordinal) || deployment.metadata.deletionTimestamp) continue;
      deployed.add(ordinal);
      if (!byOrdinal.has(ordinal)) byOrdinal.set(ordinal, []);
    }
    if (byOrdinal.size === 0) return byOrdinal;
    for (const pod of await this.#listAll('v1', 'Pod', selector)) {
      const ordinal = ordinalOf(pod);
      if (podRuns(pod) && deployed.has(ordinal)) byOrdinal.get(ordinal)?.push(pod);
    }
    return byOrdinal;
  }

  async isAlive(instanceId: string): Promise<boolean> {
    const replicas = await this.#replicaPods(instanceId);
    return replicas.size > 0 && [...replicas.values()].every((pods) => pods.length > 0);
  }

  async replicas(instanceId: string): Promise<ReplicaState[]> {
    const replicas = await this.#replicaPods(instanceId);
    return [...replicas.entries()]
      .sort(([a], [b]) => a - b)
      .map(([ordinal, pods]) => {
        const ip = pods.map(podIp).find((address) => address !== null) ?? null;
        return {
          ordinal,
          url: ip === null ? null : `http://${ip}:${INSTANCE_PORT}`,
          alive: pods.length > 0,
        };
      });
  }

  /**
   * Applies the key-set Secret with the new keys: the kubelet updates the mounted keys file, and
   * the instance re-reads it without a restart. The Secret is not read (the driver may not):
   * its namespace, labels and owner are those of the instance Service, applied beside it.
   */
  async updateKeys(instanceId: string, keys: InstanceKeySet): Promise<void> {
    const services = await this.#listAll('v1', 'Service', instanceSelector(instanceId));
    const service = services.find((one) => one.metadata.name === instanceObjectName(instanceId));
    if (!service) return;
    await this.#api.apply({
      ...SECRET,
      metadata: {
        name: instanceKeysName(instanceId),
        namespace: service.metadata.namespace,
        labels: service.metadata.labels,
        ...(service.metadata.ownerReferences
          ? {
              ownerReferences: service.metadata.ownerReferences.map(
                ({ apiVersion, kind, name: ownerName, uid, controller, blockOwnerDeletion }) => ({
                  apiVersion,
                  kind,
                  name: ownerName,
                  uid,
                  controller,
                  blockOwnerDeletion,
                }),
              ),
            }
          : {}),
      },
      type: 'Opaque',
      data: secretData({ [KEYS_FILE_NAME]: keysFileText(keys) }),
    });
  }

  /**
   * The instance's log: every pod's `instance` container through the pod log API, and events
   * about its Deployments and pods as infra lines, merged by time. The token (log-token.ts)
   * holds, per pod and for the events, the time of the last line returned.
   */
  async readLogs(instanceId: string, token: string | undefined): Promise<LogChunk> {
    const positions = decodeLogToken(token);
    const pods = await this.#listAll('v1', 'Pod', instanceSelector(instanceId));
    const sources: SourcedLine[][] = [];
    for (const pod of pods) {
      const source = `pod/${pod.metadata.name}`;
      const position = positions?.[source];
      const bounds = position
        ? { sinceSeconds: sinceSecondsOf(position.time) }
        : positions
          ? {}
          : { tailLines: TAIL_LINES };
      const text = await this.#api.podLog(pod.metadata.namespace, pod.metadata.name, {
        container: INSTANCE_CONTAINER,
        ...bounds,
      });
      sources.push(linesAfter(parseTimestampedLog(source, text), position));
    }
    const deployments = await this.#listAll('apps/v1', 'Deployment', instanceSelector(instanceId));
    const names = new Set([...pods, ...deployments].map((object) => object.metadata.name));
    const namespaces = new Set(
      [...pods, ...deployments].map((object) => object.metadata.namespace),
    );
    const events: SourcedLine[] = [];
    for (const namespace of namespaces) events.push(...(await this.#eventLines(namespace, names)));
    sources.push(
      linesAfter(
        events.sort((a, b) => compareTimes(a.time, b.time)),
        positions?.[EVENTS_SOURCE],
      ),
    );
    const merged = sources.flat().sort((a, b) => compareTimes(a.time, b.time));
    // A first read returns the last lines and marks everything read as seen; a later read
    // returns the oldest lines first, at most a page.
    const page = positions ? merged.slice(0, MAX_PAGE_LINES) : merged.slice(-TAIL_LINES);
    const next: LogPositions = advance(positions ?? {}, positions ? page : merged);
    return {
      lines: page.map((line) => parseLogLine(line.message, Date.parse(line.time))),
      nextToken: encodeLogToken(next),
    };
  }

  async reapOrphans(liveInstanceIds: () => Promise<Iterable<string>>): Promise<string[]> {
    const selector = `${LABELS.managedBy}=replix,${LABELS.component}=instance`;
    const found = new Set<string>();
    // Secrets are not listed (the driver may not): one without its Deployment and Service is
    // owned by neither only if a first start stopped between them, and goes with stop().
    for (const kind of [DEPLOYMENT, SERVICE]) {
      for (const object of await this.#listAll(kind.apiVersion, kind.kind, selector)) {
        const id = object.metadata.labels?.[LABELS.instanceId];
        if (id) found.add(id);
      }
    }
    // Asked after the listing: an instance recorded meanwhile is never taken for an orphan.
    const live = new Set([...(await liveInstanceIds())].map(labelValue));
    const reaped: string[] = [];
    for (const instanceId of found) {
      if (live.has(instanceId)) continue;
      if (await this.isAlive(instanceId)) {
        this.#log.warn({ instanceId }, 'stopping an orphaned instance');
        reaped.push(instanceId);
      }
      await this.stop(instanceId);
    }
    return reaped;
  }

  /** Leaves every instance and endpoint running: they belong to the cluster. */
  async shutdown(): Promise<string[]> {
    return [];
  }

  // --- endpoints -------------------------------------------------------------------------

  async #endpointInput(
    databaseId: string,
    servingInstanceId: string | null,
  ): Promise<{ input: EndpointInput; options: EndpointManifestOptions; namespace: string }> {
    const place = await this.#placeOf(databaseId);
    const namespace = await this.#namespace(place);
    const options = {
      ...this.#options.endpoints,
      namespacePattern: this.#options.instances.namespacePattern,
    };
    return { input: { ...place, databaseId, servingInstanceId }, options, namespace };
  }

  /** Sets (or, null, removes) the database's message for the namespace's unrouted server. */
  async #setMessage(
    namespace: string,
    input: EndpointInput,
    options: EndpointManifestOptions,
    message: string | null,
  ) {
    await this.#api.apply(
      unroutedMessageConfigMap(namespace, endpointHost(options, input), message),
      messageManager(databaseObjectName(input.databaseId)),
    );
  }

  /**
   * Applies the database's Service and route, keeping whom they serve: a new endpoint starts
   * unrouted. The endpoint's `port` is the gateway's for the scheme (443 or 80): users reach
   * the database at `<scheme>://<host>`, whatever port was asked.
   */
  async openEndpoint(databaseId: string, _port: number | null): Promise<Endpoint> {
    const blank = await this.#endpointInput(databaseId, null);
    const existing = await this.#api.get({
      ...SERVICE,
      namespace: blank.namespace,
      name: databaseObjectName(databaseId),
    });
    const serving = existing?.metadata.annotations?.[SERVING_ANNOTATION] ?? null;
    if (serving === null) {
      if (!existing)
        await this.#setMessage(
          blank.namespace,
          blank.input,
          blank.options,
          unroutedMessage('starting'),
        );
      await this.#applyEndpoint(blank.input, blank.options);
    } else {
      await this.#applyEndpoint({ ...blank.input, servingInstanceId: serving }, blank.options);
    }
    const scheme = this.#options.endpoints.scheme;
    return {
      port: scheme === 'https' ? 443 : 80,
      url: `${scheme}://${endpointHost(blank.options, blank.input)}`,
    };
  }

  /**
   * The Service first when routing (its selector is the switch; the route then points at it),
   * the route first when unrouting (so no request meets a Service without pods).
   */
  async #applyEndpoint(input: EndpointInput, options: EndpointManifestOptions): Promise<void> {
    const service = withServing(databaseService(input, options), input.servingInstanceId);
    const route = databaseRoute(input, options);
    const order = input.servingInstanceId === null ? [route, service] : [service, route];
    for (const object of order) await this.#api.apply(object);
  }

  async route(databaseId: string, instanceId: string): Promise<void> {
    const { input, options, namespace } = await this.#endpointInput(databaseId, instanceId);
    await this.#applyEndpoint(input, options);
    await this.#setMessage(namespace, input, options, null);
  }

  /**
   * Sets the message, points the route at the unrouted server, and resolves once that server
   * answers the message for the database's host (the kubelet brings a changed ConfigMap into
   * the pods on its own schedule, up to a minute on a real cluster).
   */
  async unroute(databaseId: string, message: string): Promise<void> {
    const { input, options, namespace } = await this.#endpointInput(databaseId, null);
    await this.#setMessage(namespace, input, options, message);
    await this.#applyEndpoint(input, options);
    await this.#awaitMessage(namespace, endpointHost(options, input), message);
  }

  /**
   * Polls the namespace's unrouted server (through its cluster IP, with the endpoint's host)
   * until it answers `message`. Gives up quietly when the server cannot be reached from here
   * (a control plane outside the cluster) or after MESSAGE_WAIT_MS.
   */
  async #awaitMessage(namespace: string, host: string, message: string): Promise<void> {
    const service = await this.#api.get({ ...SERVICE, namespace, name: UNROUTED_NAME });
    const ip = (service?.spec as { clusterIP?: string } | undefined)?.clusterIP;
    if (!ip || ip === 'None') return;
    const deadline = Date.now() + MESSAGE_WAIT_MS;
    const pauses = new PollPauses(FIRST_POLL_MS, MAX_POLL_MS);
    while (Date.now() < deadline) {
      const answered = await unroutedAnswer(ip, host);
      if (answered === null) return;
      if (answered === message) return;
      await sleep(pauses.next());
    }
    this.#log.warn({ namespace }, 'the unrouted server did not take the new message in time');
  }

  /**
   * Removes every object of the database's checkpoints from the bucket, every replica's
   * (drop-checkpoint-objects.ts). Without a bucket there is nothing to remove: a pod's
   * checkpoints then go with its disk (docs/control-plane/instances.md#checkpoints).
   */
  async dropCheckpoints(databaseId: string): Promise<void> {
    const bucket = this.#options.instances.checkpoints;
    if (bucket === undefined) return;
    const { dropCheckpointObjects } = await import('./drop-checkpoint-objects.ts');
    await dropCheckpointObjects(bucket, databaseId, this.#log);
  }

  /** Deletes the database's route and Service, and its message; found by label, so the
   * database's place is not needed (it may be deleted already). */
  async closeEndpoint(databaseId: string): Promise<void> {
    const selector = `${LABELS.managedBy}=replix,${LABELS.component}=endpoint,${LABELS.databaseId}=${labelValue(databaseId)}`;
    const route = this.#options.endpoints.route;
    const routeKind =
      route.kind === 'ingress'
        ? { apiVersion: 'networking.k8s.io/v1', kind: 'Ingress' }
        : { apiVersion: 'gateway.networking.k8s.io/v1', kind: 'HTTPRoute' };
    for (const object of await this.#listAll(routeKind.apiVersion, routeKind.kind, selector)) {
      await this.#api.delete(refOf(object));
    }
    for (const service of await this.#listAll('v1', 'Service', selector)) {
      await this.#api.delete(refOf(service));
      await this.#api.apply(
        unroutedMessageConfigMap(service.metadata.namespace, '', null),
        messageManager(databaseObjectName(databaseId)),
      );
    }
  }
}

/**
 * The message the unrouted server at `ip` answers for `host`, or null when it cannot be
 * reached (or answers something else than its 503 envelope).
 */
async function unroutedAnswer(ip: string, host: string): Promise<string | null> {
  try {
    const body = await new Promise<string>((resolve, reject) => {
      const outgoing = httpRequest(
        { host: ip, port: UNROUTED_SERVICE_PORT, path: '/', headers: { host }, timeout: 2000 },
        (response) => {
          const chunks: Buffer[] = [];
          response.on('data', (chunk: Buffer) => chunks.push(chunk));
          response.on('end', () => resolve(Buffer.concat(chunks).toString('utf8')));
          response.on('error', reject);
        },
      );
      outgoing.on('timeout', () => outgoing.destroy(new Error('timeout')));
      outgoing.on('error', reject);
      outgoing.end();
    });
    const message = (JSON.parse(body) as { error?: { message?: unknown } }).error?.message;
    return typeof message === 'string' ? message : null;
  } catch {
    return null;
  }
}

/** Which instance the database's Service selects, by its full id (labels may be shortened). */
const SERVING_ANNOTATION = 'replix.dev/serving-instance-id';

function withServing(service: KubernetesObject, instanceId: string | null): KubernetesObject {
  if (instanceId === null) return service;
  return {
    ...service,
    metadata: { ...service.metadata, annotations: { [SERVING_ANNOTATION]: instanceId } },
  };
}
