import { Buffer } from 'node:buffer';
import type { IncomingMessage, ServerResponse } from 'node:http';
import { parse as parseYaml } from 'yaml';
import { API_RESOURCES, type ApiResource, groupVersion, resourceByPath } from './api-resources.ts';
import { ApiError, badRequest } from './api-status.ts';
import { parseLabelSelector } from './label-selector.ts';
import type { ObjectStore, StoredObject } from './object-store.ts';
import type { PodLogs } from './pod-logs.ts';

/** One request as the fake received it, for tests to assert which calls a client made. */
export interface RecordedRequest {
  readonly method: string;
  /** The path without the query. */
  readonly path: string;
  readonly query: Readonly<Record<string, string>>;
  /** `fieldManager` from the query, when given. */
  readonly fieldManager?: string;
}

/** Plain text (pod logs), a JSON body, or a watch's stream of events. */
type Answer =
  | string
  | { code?: number; body: unknown }
  | { stream: (response: ServerResponse) => void };

const APPLY_PATCH = 'application/apply-patch+yaml';
const MAX_BODY_BYTES = 3 * 1024 * 1024;

/** The REST paths of the API server that the fake implements: discovery, objects, pod logs. */
export class ApiRoutes {
  readonly #store: ObjectStore;
  readonly #logs: PodLogs;
  readonly #record: (request: RecordedRequest) => void;

  constructor(store: ObjectStore, logs: PodLogs, record: (request: RecordedRequest) => void) {
    this.#store = store;
    this.#logs = logs;
    this.#record = record;
  }

  async handle(request: IncomingMessage, response: ServerResponse): Promise<void> {
    const url = new URL(request.url ?? '/', 'http://fake');
    const query = Object.fromEntries(url.searchParams);
    const method = request.method ?? 'GET';
    this.#record({
      method,
      path: url.pathname,
      query,
      ...(query.fieldManager ? { fieldManager: query.fieldManager } : {}),
    });
    try {
      const body = await readBody(request);
      const answer = this.#route(
        method,
        url.pathname,
        query,
        request.headers['content-type'] ?? '',
        body,
      );
      if (typeof answer === 'string') send(response, 200, answer, 'text/plain');
      else if ('stream' in answer) answer.stream(response);
      else send(response, answer.code ?? 200, JSON.stringify(answer.body), 'application/json');
    } catch (error) {
      const failure =
        error instanceof ApiError
          ? error
          : new ApiError(500, 'InternalError', 'an internal error occurred');
      send(response, failure.code, JSON.stringify(failure.toStatus()), 'application/json');
    }
  }

  #route(
    method: string,
    path: string,
    query: Record<string, string>,
    contentType: string,
    body: string,
  ): Answer {
    if (method === 'GET') {
      const discovery = discoveryDocument(path);
      if (discovery) return { body: discovery };
    }
    const match = /^\/(?:api\/(v1)|apis\/([^/]+\/[^/]+))\/(.+)$/.exec(path);
    if (!match) throw unknownPath();
    const segments = (match[3] as string).split('/').map(decodeSegment);
    const [namespace, rest] =
      segments[0] === 'namespaces' && segments.length >= 3
        ? [segments[1], segments.slice(2)]
        : [undefined, segments];
    const [plural, name, subresource] = rest as [string, string?, string?];
    const resource = resourceByPath(match[1] ?? (match[2] as string), plural);
    if (
      !resource ||
      rest.length > 3 ||
      (resource.namespaced !== (namespace !== undefined) && name !== undefined)
    ) {
      throw unknownPath();
    }
    if (subresource !== undefined) {
      if (subresource !== 'log' || resource.kind !== 'Pod' || method !== 'GET') {
        throw unknownPath();
      }
      return this.#podLog(namespace as string, name as string, query);
    }
    if (name === undefined) {
      if (method !== 'GET') throw notAllowed(method, resource);
      const matches = parseLabelSelector(query.labelSelector ?? '');
      if (query.watch === 'true' || query.watch === '1') {
        return {
          stream: (response) =>
            this.#watch(response, resource, namespace, matches, query.resourceVersion),
        };
      }
      const items = this.#store.list(resource, namespace, matches);
      const list = {
        apiVersion: groupVersion(resource),
        kind: `${resource.kind}List`,
        metadata: { resourceVersion: this.#store.resourceVersion },
        items,
      };
      return { body: list };
    }
    if (method === 'GET') return { body: this.#store.get(resource, namespace, name) };
    if (method === 'PATCH' && !resource.readOnly)
      return this.#apply(resource, namespace, name, query, contentType, body);
    if (method === 'DELETE') {
      const options = (body === '' ? {} : (parseJson(body) ?? {})) as {
        propagationPolicy?: string;
        gracePeriodSeconds?: unknown;
      };
      const deleted = this.#store.delete(
        resource,
        namespace,
        name,
        query.propagationPolicy ?? options.propagationPolicy,
        gracePeriodOf(query.gracePeriodSeconds ?? options.gracePeriodSeconds),
      );
      const details = {
        name,
        group: resource.group,
        kind: resource.plural,
        uid: deleted.metadata.uid,
      };
      return {
        body: { kind: 'Status', apiVersion: 'v1', metadata: {}, status: 'Success', details },
      };
    }
    throw notAllowed(method, resource);
  }

  #apply(
    resource: ApiResource,
    namespace: string | undefined,
    name: string,
    query: Record<string, string>,
    contentType: string,
    body: string,
  ): { code: number; body: unknown } {
    if (!contentType.startsWith(APPLY_PATCH)) {
      throw new ApiError(
        415,
        'UnsupportedMediaType',
        `the fake API server accepts only ${APPLY_PATCH} patches`,
      );
    }
    if (!query.fieldManager)
      throw badRequest('PATCH requests require fieldManager to be set for apply');
    let config: unknown;
    try {
      config = parseYaml(body);
    } catch {
      throw badRequest('error decoding YAML: the apply patch is not valid YAML or JSON');
    }
    const existed = this.#exists(resource, namespace, name);
    const object = this.#store.apply(
      resource,
      namespace,
      name,
      config,
      query.fieldManager,
      query.force === 'true',
    );
    return { code: existed ? 200 : 201, body: object };
  }

  #exists(resource: ApiResource, namespace: string | undefined, name: string): boolean {
    try {
      this.#store.get(resource, namespace, name);
      return true;
    } catch {
      return false;
    }
  }

  /**
   * A watch: one JSON event per line (`ADDED`, `MODIFIED`, `DELETED`) until the client
   * closes it. Without a `resourceVersion` (or with "0") it starts with the current objects
   * as ADDED; with one, it sends only later writes (the fake keeps no history, so it never
   * answers 410 Gone).
   */
  #watch(
    response: ServerResponse,
    resource: ApiResource,
    namespace: string | undefined,
    matches: (labels: Record<string, string>) => boolean,
    resourceVersion: string | undefined,
  ): void {
    response.writeHead(200, { 'content-type': 'application/json' });
    const event = (type: string, object: StoredObject) =>
      response.write(`${JSON.stringify({ type, object })}\n`);
    if (!resourceVersion || resourceVersion === '0') {
      for (const object of this.#store.list(resource, namespace, matches)) event('ADDED', object);
    }
    const stop = this.#store.onChange(({ type, created, resource: written, object }) => {
      if (written !== resource) return;
      if (namespace !== undefined && object.metadata.namespace !== namespace) return;
      if (!matches((object.metadata.labels ?? {}) as Record<string, string>)) return;
      event(type === 'deleted' ? 'DELETED' : created ? 'ADDED' : 'MODIFIED', object);
    });
    response.on('close', stop);
  }

  /**
   * The pod's lines (of `container`, by default its first), after `sinceTime` or within the
   * last `sinceSeconds`, and at most the last `tailLines`.
   */
  #podLog(namespace: string, name: string, query: Record<string, string>): string {
    const pod = this.#store.get(resourceByPath('v1', 'pods') as ApiResource, namespace, name);
    const spec = (pod.spec ?? {}) as {
      containers?: { name?: string }[];
      initContainers?: { name?: string }[];
    };
    const names = [...(spec.containers ?? []), ...(spec.initContainers ?? [])].map((c) => c.name);
    if (query.container !== undefined && names.length > 0 && !names.includes(query.container)) {
      throw badRequest(`container ${query.container} is not valid for pod ${name}`);
    }
    let lines = this.#logs.lines(namespace, name, query.container ?? names[0]);
    if (query.sinceTime !== undefined && query.sinceSeconds !== undefined)
      throw badRequest('at most one of sinceTime or sinceSeconds may be specified');
    if (query.sinceSeconds !== undefined) {
      const seconds = Number(query.sinceSeconds);
      if (!Number.isInteger(seconds) || seconds < 1)
        throw badRequest('sinceSeconds must be a positive integer');
      const since = Date.now() - seconds * 1000;
      lines = lines.filter(({ time }) => Date.parse(time) >= since);
    }
    if (query.sinceTime !== undefined) {
      const since = Date.parse(query.sinceTime);
      if (Number.isNaN(since))
        throw badRequest(`sinceTime: invalid RFC 3339 time ${JSON.stringify(query.sinceTime)}`);
      lines = lines.filter(({ time }) => Date.parse(time) >= since);
    }
    if (query.tailLines !== undefined) {
      const tail = Number(query.tailLines);
      if (!Number.isInteger(tail) || tail < 0)
        throw badRequest('tailLines must be a non-negative integer');
      lines = tail === 0 ? [] : lines.slice(-tail);
    }
    const timestamps = query.timestamps === 'true';
    return lines.map(({ time, line }) => `${timestamps ? `${time} ` : ''}${line}\n`).join('');
  }
}

/** A DeleteOptions grace period: a non-negative whole number of seconds, or none. */
function gracePeriodOf(value: unknown): number | undefined {
  if (value === undefined) return undefined;
  const seconds = Number(value);
  if (!Number.isInteger(seconds) || seconds < 0)
    throw badRequest('gracePeriodSeconds must be a non-negative integer');
  return seconds;
}

function unknownPath(): ApiError {
  return new ApiError(404, 'NotFound', 'the server could not find the requested resource');
}

function decodeSegment(segment: string): string {
  try {
    return decodeURIComponent(segment);
  } catch {
    throw badRequest('the path is not valid percent-encoding');
  }
}

function notAllowed(method: string, resource: ApiResource): ApiError {
  return new ApiError(
    405,
    'MethodNotAllowed',
    `the fake API server does not implement ${method} on ${resource.plural}`,
  );
}

/** `/version`, `/api`, `/apis` and each group version's resource list, or undefined. */
function discoveryDocument(path: string): unknown {
  if (path === '/version')
    return { major: '1', minor: '32', gitVersion: 'v1.32.0-replix-fake', platform: 'linux/amd64' };
  if (path === '/api')
    return { kind: 'APIVersions', versions: ['v1'], serverAddressByClientCIDRs: [] };
  const groups = [...new Set(API_RESOURCES.filter((r) => r.group !== '').map(groupVersion))];
  if (path === '/apis') {
    return {
      kind: 'APIGroupList',
      apiVersion: 'v1',
      groups: groups.map((gv) => {
        const [name, version] = gv.split('/') as [string, string];
        const versions = [{ groupVersion: gv, version }];
        return { name, versions, preferredVersion: versions[0] };
      }),
    };
  }
  const gv = path === '/api/v1' ? 'v1' : path.replace(/^\/apis\//, '');
  if (gv !== 'v1' && !groups.includes(gv)) return undefined;
  const resources = API_RESOURCES.filter((r) => groupVersion(r) === gv).flatMap((r) => {
    const verbs = r.readOnly ? ['get', 'list', 'delete'] : ['get', 'list', 'patch', 'delete'];
    const main = {
      name: r.plural,
      singularName: r.kind.toLowerCase(),
      namespaced: r.namespaced,
      kind: r.kind,
      verbs,
      shortNames: r.shortNames ?? [],
    };
    const log = {
      name: 'pods/log',
      singularName: '',
      namespaced: true,
      kind: 'Pod',
      verbs: ['get'],
    };
    return r.kind === 'Pod' ? [main, log] : [main];
  });
  return { kind: 'APIResourceList', apiVersion: 'v1', groupVersion: gv, resources };
}

async function readBody(request: IncomingMessage): Promise<string> {
  const chunks: Buffer[] = [];
  let size = 0;
  for await (const chunk of request) {
    size += (chunk as Buffer).length;
    if (size > MAX_BODY_BYTES)
      throw new ApiError(413, 'RequestEntityTooLarge', 'the request body is too large');
    chunks.push(chunk as Buffer);
  }
  return Buffer.concat(chunks).toString('utf8');
}

function parseJson(text: string): unknown {
  try {
    return JSON.parse(text);
  } catch {
    throw badRequest('the request body is not valid JSON');
  }
}

function send(response: ServerResponse, code: number, text: string, contentType: string): void {
  response.writeHead(code, {
    'content-type': contentType,
    'content-length': Buffer.byteLength(text),
  });
  response.end(text);
}
