import { resourceByKind } from './api-resources.ts';
import type { JsonObject, ObjectStore, StoredObject } from './object-store.ts';
import { isReadyPod } from './pod-template.ts';

const PODS = resourceByKind('Pod');

/** One entry of a Service's `spec.ports`. */
export interface ServicePort {
  name?: string;
  port?: number;
  targetPort?: number | string;
  protocol?: string;
}

export interface Endpoint {
  readonly host: string;
  readonly port: number;
}

/**
 * Where a new connection to a Service goes: one of the READY pods its selector matches now
 * (a pod being deleted is out at once), round-robin, at the `targetPort` by number or by the
 * container port's name. Read per connection, so a selector change applies to the next one.
 */
export class ServiceEndpoints {
  readonly #store: ObjectStore;
  readonly #turns = new Map<string, number>();

  constructor(store: ObjectStore) {
    this.#store = store;
  }

  /** The endpoints of the Service's port, by pod name. */
  ready(service: StoredObject, servicePort: ServicePort): Endpoint[] {
    const selector = ((service.spec as JsonObject | undefined)?.selector ?? {}) as Record<
      string,
      string
    >;
    // A Service without a selector has only the endpoints someone writes: none here.
    if (Object.keys(selector).length === 0) return [];
    const matches = (labels: Record<string, string>) =>
      Object.entries(selector).every(([key, value]) => labels[key] === value);
    const target = servicePort.targetPort ?? servicePort.port;
    const endpoints: Endpoint[] = [];
    for (const pod of this.#store.list(PODS, service.metadata.namespace, matches)) {
      const host = (pod.status as JsonObject | undefined)?.podIP;
      if (!isReadyPod(pod) || typeof host !== 'string') continue;
      const port = targetPortOf(pod, target);
      if (port !== undefined) endpoints.push({ host, port });
    }
    return endpoints;
  }

  /** The next endpoint in turn; undefined when no pod is ready. */
  pick(service: StoredObject, servicePort: ServicePort): Endpoint | undefined {
    const endpoints = this.ready(service, servicePort);
    if (endpoints.length === 0) return undefined;
    const key = `${service.metadata.uid}/${servicePort.port}`;
    const turn = this.#turns.get(key) ?? 0;
    this.#turns.set(key, turn + 1);
    return endpoints[turn % endpoints.length];
  }
}

function targetPortOf(pod: StoredObject, target: number | string | undefined): number | undefined {
  if (typeof target === 'number') return target;
  if (target === undefined) return undefined;
  if (/^\d+$/.test(target)) return Number(target);
  const containers = ((pod.spec as JsonObject | undefined)?.containers ?? []) as {
    ports?: { name?: string; containerPort?: number }[];
  }[];
  for (const container of containers) {
    const port = container.ports?.find((p) => p.name === target)?.containerPort;
    if (port !== undefined) return port;
  }
  return undefined;
}
