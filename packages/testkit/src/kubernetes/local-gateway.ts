import { Buffer } from 'node:buffer';
import {
  createServer,
  type IncomingHttpHeaders,
  type IncomingMessage,
  request,
  type Server,
  type ServerResponse,
} from 'node:http';
import type { AddressInfo } from 'node:net';
import { resourceByKind } from './api-resources.ts';
import { routeFor } from './gateway-routes.ts';
import type { JsonObject, ObjectStore, StoredObject } from './object-store.ts';
import type { ServiceEndpoints, ServicePort } from './service-endpoints.ts';

const SERVICES = resourceByKind('Service');
/** Headers of one hop, never forwarded (RFC 9110 §7.6.1). */
const HOP_BY_HOP = new Set([
  'connection',
  'keep-alive',
  'proxy-connection',
  'transfer-encoding',
  'te',
  'trailer',
  'upgrade',
]);

/**
 * The fake's gateway: one HTTP listener on 127.0.0.1 standing for every Gateway and Ingress
 * controller. A request goes by its `Host` header (and path) to the Service of the matching
 * HTTPRoute or Ingress (`gateway-routes.ts`), then to one of the Service's ready pods, request
 * and response streamed. No matching route: 404; no ready pod: 503; the pod failing: 502.
 */
export class LocalGateway {
  readonly #store: ObjectStore;
  readonly #endpoints: ServiceEndpoints;
  readonly #server: Server;

  constructor(store: ObjectStore, endpoints: ServiceEndpoints) {
    this.#store = store;
    this.#endpoints = endpoints;
    this.#server = createServer((incoming, response) => this.#route(incoming, response));
  }

  /** Listens on a free port; resolves to `http://127.0.0.1:<port>`. */
  async listen(): Promise<string> {
    await new Promise<void>((resolve) => this.#server.listen(0, '127.0.0.1', resolve));
    return `http://127.0.0.1:${(this.#server.address() as AddressInfo).port}`;
  }

  async close(): Promise<void> {
    this.#server.closeAllConnections();
    await new Promise((resolve) => this.#server.close(resolve));
  }

  #route(incoming: IncomingMessage, response: ServerResponse): void {
    const host = (incoming.headers.host ?? '').replace(/:\d+$/, '').toLowerCase();
    const path = pathOf(incoming.url);
    if (path === undefined) {
      refuse(response, 400, 'the request target is not a path');
      return;
    }
    const backend = routeFor(this.#store, host, path);
    if (!backend) {
      refuse(response, 404, `no route for host ${JSON.stringify(host)}`);
      return;
    }
    let service: StoredObject;
    try {
      service = this.#store.get(SERVICES, backend.namespace, backend.service);
    } catch {
      refuse(response, 503, "the route's backend Service does not exist");
      return;
    }
    const ports = ((service.spec as JsonObject | undefined)?.ports ?? []) as ServicePort[];
    const servicePort =
      ports.find((p) => p.port === backend.port || p.name === backend.port) ??
      (backend.port === undefined ? ports[0] : undefined);
    const endpoint = servicePort && this.#endpoints.pick(service, servicePort);
    if (!endpoint) {
      refuse(response, 503, "no ready pod behind the route's Service");
      return;
    }
    const upstream = request(
      {
        host: endpoint.host,
        port: endpoint.port,
        method: incoming.method,
        path: incoming.url,
        headers: forwardedHeaders(incoming.headers, incoming.socket.remoteAddress),
        // A fresh connection each time: a pooled one to a pod that has since stopped would
        // fail the request, and each request picks its pod anew anyway.
        agent: false,
      },
      (answer) => {
        const headers: IncomingHttpHeaders = {};
        for (const [name, value] of Object.entries(answer.headers))
          if (!HOP_BY_HOP.has(name)) headers[name] = value;
        response.writeHead(answer.statusCode ?? 502, headers);
        answer.pipe(response);
        answer.on('error', () => response.destroy());
      },
    );
    upstream.on('error', () => {
      if (!response.headersSent) refuse(response, 502, 'the backend pod did not answer');
      else response.destroy();
    });
    incoming.pipe(upstream);
    response.on('close', () => {
      if (!response.writableFinished) upstream.destroy();
    });
  }
}

/** The path of an origin-form request target (`/a/b?c`); undefined for anything else. */
function pathOf(target: string | undefined): string | undefined {
  if (!target?.startsWith('/')) return undefined;
  try {
    return new URL(target, 'http://gateway').pathname;
  } catch {
    return undefined;
  }
}

function forwardedHeaders(headers: IncomingHttpHeaders, client: string | undefined) {
  const forwarded: IncomingHttpHeaders = {};
  for (const [name, value] of Object.entries(headers))
    if (!HOP_BY_HOP.has(name)) forwarded[name] = value;
  const before = headers['x-forwarded-for'];
  forwarded['x-forwarded-for'] = before ? `${before}, ${client}` : (client ?? '');
  return forwarded;
}

function refuse(response: ServerResponse, code: number, message: string): void {
  const body = `${message}\n`;
  response.writeHead(code, {
    'content-type': 'text/plain; charset=utf-8',
    'content-length': Buffer.byteLength(body),
  });
  response.end(body);
}
