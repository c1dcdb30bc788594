import { Buffer } from 'node:buffer';
import {
  Agent,
  createServer,
  type IncomingHttpHeaders,
  type IncomingMessage,
  request,
  type Server,
  type ServerResponse,
} from 'node:http';
import { Server as NetServer } from 'node:net';
import { pipeline } from 'node:stream';
import { setTimeout as sleep } from 'node:timers/promises';
import { createClientErrorHandler, HTTP_LIMITS, type HttpLimits, RELEASE } from '@replix/runtime';
import { inSpan, tracingActive, withTraceHeaders } from '@replix/runtime/tracing';
import type { Logger } from 'pino';
import { canListen } from './free-port.ts';

/** Headers that describe one connection, not the message: never forwarded (RFC 9110 §7.6.1). */
const HOP_BY_HOP = new Set([
  'connection',
  'keep-alive',
  'proxy-authenticate',
  'proxy-authorization',
  'proxy-connection',
  'te',
  'trailer',
  'transfer-encoding',
  'upgrade',
]);
/**
 * Request bodies up to this size (a query's default limit, `query.max_body_bytes`) are read
 * whole before they are forwarded, so a request a replica never answered can go to another one.
 * A larger body is streamed, and sent again only if its connection never opened.
 */
const RESENDABLE_BODY_BYTES = 64 * 1024;
/** How long a restarted router waits for an endpoint's port (its old owner may be exiting). */
const PORT_WAIT_MS = 5000;
const PORT_RETRY_MS = 100;

/** One replica of the serving instance: its private address, with its own connections. */
interface Backend {
  readonly host: string;
  readonly port: number;
  /** Kept-alive connections to this replica only: a switch leaves them to drain with it. */
  readonly agent: Agent;
  /** Requests forwarded to it whose answer has not finished. */
  inFlight: number;
}

/** Where an endpoint's requests go: the replicas of one instance. */
interface Target {
  readonly instanceId: string;
  readonly backends: readonly Backend[];
  /** Where the next tie between equally busy replicas is broken (round robin). */
  nextTurn: number;
}

interface Endpoint {
  readonly server: Server;
  readonly port: number;
  target: Target | null;
  /** What a request hears while nothing is routed (paused, terminated, not deployed yet). */
  unroutedMessage: string;
}

export const NOT_DEPLOYED_MESSAGE =
  'The database has no running instance yet: it serves queries once its deploy finishes.';
const UNREACHABLE_MESSAGE =
  'The database instance is not answering; it is being restarted. Retry in a few seconds.';

/** Copies the headers that belong to the message, dropping hop-by-hop ones and those `Connection` names. */
export function endToEndHeaders(headers: IncomingHttpHeaders): IncomingHttpHeaders {
  const named = String(headers.connection ?? '')
    .split(',')
    .map((name) => name.trim().toLowerCase())
    .filter(Boolean);
  const result: IncomingHttpHeaders = {};
  for (const [name, value] of Object.entries(headers)) {
    if (value === undefined || HOP_BY_HOP.has(name) || named.includes(name)) continue;
    result[name] = value;
  }
  return result;
}

function sendUnavailable(response: ServerResponse, message: string): void {
  const body = JSON.stringify({ error: { code: 'service_unavailable', message } });
  response.writeHead(503, {
    'content-type': 'application/json',
    'content-length': Buffer.byteLength(body),
    'cache-control': 'no-store',
    'retry-after': '5',
    // Browsers read the instance's answers from any origin; this one too.
    'access-control-allow-origin': '*',
  });
  response.end(body);
}

/**
 * The least busy of the backends not yet tried: fewest requests in flight, ties broken round
 * robin. Least-in-flight rather than plain round robin because query costs differ by orders of
 * magnitude (a 1 ms lookup, a 5 s aggregate): a replica busy with a slow query gets the next
 * requests only once the others are as busy, while under light, even load the tie-break
 * alternates as round robin does.
 */
export function leastBusy<T extends { inFlight: number }>(
  backends: readonly T[],
  tried: ReadonlySet<T>,
  turn: number,
): T | undefined {
  let best: T | undefined;
  for (let step = 0; step < backends.length; step++) {
    const backend = backends[(turn + step) % backends.length] as T;
    if (tried.has(backend)) continue;
    if (best === undefined || backend.inFlight < best.inFlight) best = backend;
  }
  return best;
}

/**
 * The stable endpoints of the process driver: one HTTP listener per database on a port that
 * belongs to the database for life, forwarding every request to one of the replicas of the
 * database's current instance on their private ports (`leastBusy`). A request whose connection
 * to a replica could not be opened, or that a replica dropped unanswered, goes to the next
 * replica (`#send` says when); only when none can be reached does it get 503. Switching the
 * target is one assignment, so new requests go to the new instance at once while requests
 * already forwarded finish on the old one. Answers stream with backpressure; request bodies
 * up to 64 KiB are read whole first (so they can be sent again), larger ones stream too. A
 * client that goes away aborts its
 * upstream request, so the instance cancels the query. With no target it answers 503 with the
 * instance API's error envelope. Built on node:http: no dependency, and full control over the
 * header, timeout and hop-by-hop rules a proxy needs.
 */
export class EndpointRouter {
  readonly #log: Logger;
  readonly #limits: HttpLimits;
  readonly #endpoints = new Map<string, Endpoint>();
  /** Set by a hand-over's `drain`: every answer from then on closes its connection. */
  #draining = false;
  readonly #opening = new Map<string, Promise<Endpoint>>();
  /**
   * Ports this router binds beside the listener already there instead of waiting for them to
   * be free: a new router taking over from the one it replaces (`router-process.ts`).
   */
  readonly #joinPorts: Set<number>;
  readonly #portWaitMs: number;

  constructor(options: {
    log: Logger;
    limits?: HttpLimits;
    joinPorts?: Iterable<number>;
    /** How long `open` waits for a port that is taken (default 5 s; the router process: 0, it retries). */
    portWaitMs?: number;
  }) {
    this.#log = options.log;
    this.#limits = options.limits ?? HTTP_LIMITS;
    this.#joinPorts = new Set(options.joinPorts);
    this.#portWaitMs = options.portWaitMs ?? PORT_WAIT_MS;
  }

  /** From now on every port is bound only once it is free. */
  stopJoining(): void {
    this.#joinPorts.clear();
  }

  /** The databases whose endpoints listen, with their ports. */
  ports(): Map<string, number> {
    return new Map([...this.#endpoints].map(([databaseId, { port }]) => [databaseId, port]));
  }

  /**
   * Listens for the database on `port` (waiting a few seconds if it is still taken), or on a
   * port the kernel picks when null; resolves with the port. Idempotent.
   */
  async open(databaseId: string, port: number | null): Promise<number> {
    const existing = this.#endpoints.get(databaseId);
    if (existing) return existing.port;
    let opening = this.#opening.get(databaseId);
    if (!opening) {
      opening = this.#listen(port).finally(() => this.#opening.delete(databaseId));
      this.#opening.set(databaseId, opening);
    }
    const endpoint = await opening;
    this.#endpoints.set(databaseId, endpoint);
    return endpoint.port;
  }

  async #listen(port: number | null): Promise<Endpoint> {
    const deadline = Date.now() + this.#portWaitMs;
    for (;;) {
      const endpoint: Endpoint = {
        server: this.#createServer(() => endpoint),
        port: 0,
        target: null,
        unroutedMessage: NOT_DEPLOYED_MESSAGE,
      };
      try {
        // Bound with `reusePort`, so a newer router can listen beside this one before it exits;
        // a port is taken only once nothing else holds it, unless it is one to join.
        const mayBind = port === null || this.#joinPorts.has(port) || (await canListen(port));
        if (!mayBind) throw Object.assign(new Error('port in use'), { code: 'EADDRINUSE' });
        const bound = await listen(endpoint.server, port ?? 0);
        // A listener error after the start (out of file descriptors) must not end the process.
        endpoint.server.on('error', (error: NodeJS.ErrnoException) =>
          this.#log.warn({ port: bound, code: error.code }, 'endpoint listener error'),
        );
        return Object.assign(endpoint, { port: bound });
      } catch (error) {
        const code = (error as NodeJS.ErrnoException).code;
        if (code !== 'EADDRINUSE' || port === null || Date.now() >= deadline) throw error;
        await sleep(PORT_RETRY_MS);
      }
    }
  }

  #createServer(endpointOf: () => Endpoint): Server {
    const limits = this.#limits;
    // The instance's own limits hold at the router too, with the same refusals.
    const server = createServer(
      {
        maxHeaderSize: limits.max_header_bytes,
        headersTimeout: limits.headers_timeout_ms,
        requestTimeout: limits.request_timeout_ms,
        connectionsCheckingInterval: limits.timeout_check_interval_ms,
      },
      (req, res) => this.#forward(endpointOf(), req, res),
    );
    server.on('clientError', createClientErrorHandler(RELEASE, limits));
    return server;
  }

  /** From now on new requests go to the replicas of the instance at `privateUrls`. */
  route(databaseId: string, instanceId: string, privateUrls: readonly string[]): void {
    const endpoint = this.#endpoint(databaseId);
    if (privateUrls.length === 0) throw new Error('An endpoint routes to at least one replica.');
    const urls = privateUrls.map((privateUrl) => new URL(privateUrl));
    const current = endpoint.target;
    const unchanged =
      current?.instanceId === instanceId &&
      current.backends.length === urls.length &&
      current.backends.every(
        (backend, index) =>
          backend.host === urls[index]?.hostname && backend.port === Number(urls[index]?.port),
      );
    if (unchanged) return;
    endpoint.target = {
      instanceId,
      backends: urls.map((url) => ({
        host: url.hostname,
        port: Number(url.port),
        agent: new Agent({ keepAlive: true }),
        inFlight: 0,
      })),
      nextTurn: 0,
    };
  }

  /** From now on requests get 503 with `message`; requests already forwarded finish. */
  unroute(databaseId: string, message: string): void {
    const endpoint = this.#endpoints.get(databaseId);
    if (!endpoint) return;
    endpoint.target = null;
    endpoint.unroutedMessage = message;
  }

  /** The instance the endpoint forwards to, if any. */
  targetOf(databaseId: string): string | null {
    return this.#endpoints.get(databaseId)?.target?.instanceId ?? null;
  }

  /** Stops listening for the database and ends its connections. */
  async close(databaseId: string): Promise<void> {
    const endpoint = this.#endpoints.get(databaseId);
    if (!endpoint) return;
    this.#endpoints.delete(databaseId);
    endpoint.target = null;
    await new Promise<void>((resolve) => {
      endpoint.server.close(() => resolve());
      endpoint.server.closeAllConnections();
    });
  }

  async closeAll(): Promise<void> {
    await Promise.all([...this.#endpoints.keys()].map((databaseId) => this.close(databaseId)));
  }

  /**
   * Stops accepting on every endpoint and resolves once its connections have ended, or after
   * `graceMs`, when those left are cut. A plain stop closes idle kept-alive connections at once:
   * nothing will serve them. A hand-over (`handOver`: a newer router listens on the same ports)
   * does not, since cutting an idle connection races the client's next request on it (a reset):
   * each ends after its next answer, sent with `Connection: close`, or by the keep-alive
   * timeout, which clients keep below the server's, and its client reconnects to the new router.
   */
  async drain(graceMs: number, handOver = false): Promise<void> {
    const endpoints = [...this.#endpoints.values()];
    this.#endpoints.clear();
    this.#draining = handOver;
    const closed = endpoints.map(
      (endpoint) =>
        new Promise<void>((resolve) => {
          if (!handOver) {
            endpoint.server.close(() => resolve());
            endpoint.server.closeIdleConnections();
            return;
          }
          // http.Server's close() would also end the idle connections at once; the listening
          // socket's own close stops accepting and calls back once the last connection ends.
          NetServer.prototype.close.call(endpoint.server, () => resolve());
        }),
    );
    const timer = setTimeout(() => {
      for (const endpoint of endpoints) endpoint.server.closeAllConnections();
    }, graceMs);
    await Promise.all(closed);
    clearTimeout(timer);
  }

  #endpoint(databaseId: string): Endpoint {
    const endpoint = this.#endpoints.get(databaseId);
    if (!endpoint) throw new Error(`The endpoint of database ${databaseId} is not open.`);
    return endpoint;
  }

  #forward(endpoint: Endpoint, req: IncomingMessage, res: ServerResponse): void {
    // The client's next request then opens a new connection, which the router taking over gets.
    if (this.#draining) res.setHeader('connection', 'close');
    if (!tracingActive()) {
      this.#proxy(endpoint, req, res, undefined);
      return;
    }
    // With tracing on, each request is a server span continuing the caller's trace; the request
    // forwarded carries this span's `traceparent`, so the instance's span is its child.
    const traceparent = req.headers.traceparent;
    inSpan(
      `endpoint ${req.method}`,
      {
        'http.request.method': req.method ?? '',
        'replix.instance.id': endpoint.target?.instanceId ?? '',
      },
      (span) =>
        new Promise<void>((resolve, reject) => {
          this.#proxy(endpoint, req, res, withTraceHeaders({}).traceparent);
          res.once('close', () => {
            span?.setAttribute('http.response.status_code', res.statusCode);
            if (!res.writableFinished) reject(new ProxySpanError('aborted'));
            else if (res.statusCode >= 500) reject(new ProxySpanError(String(res.statusCode)));
            else resolve();
          });
        }),
      { kind: 'server', parent: typeof traceparent === 'string' ? traceparent : undefined },
    ).catch(() => {});
  }

  #proxy(
    endpoint: Endpoint,
    req: IncomingMessage,
    res: ServerResponse,
    traceparent: string | undefined,
  ): void {
    if (!endpoint.target) {
      req.resume();
      sendUnavailable(res, endpoint.unroutedMessage);
      return;
    }
    const headers = endToEndHeaders(req.headers);
    const client = req.socket.remoteAddress ?? '';
    const forwardedFor = headers['x-forwarded-for'];
    headers['x-forwarded-for'] = forwardedFor ? `${forwardedFor}, ${client}` : client;
    headers['x-forwarded-proto'] = 'http';
    if (traceparent !== undefined) {
      headers.traceparent = traceparent;
      delete headers.tracestate;
    }
    readBody(req, RESENDABLE_BODY_BYTES, (body) => {
      // The target as it is now that the body is in: a switch may have happened meanwhile.
      const target = endpoint.target;
      if (!target) {
        req.resume();
        sendUnavailable(res, endpoint.unroutedMessage);
        return;
      }
      const tried = new Set<Backend>();
      const attempt = (): void => {
        const backend = leastBusy(target.backends, tried, target.nextTurn);
        if (!backend) {
          this.#log.warn(
            { instanceId: target.instanceId, replicas: target.backends.length },
            'endpoint could not reach its instance',
          );
          req.resume();
          sendUnavailable(res, UNREACHABLE_MESSAGE);
          return;
        }
        if (tried.size === 0) target.nextTurn = (target.nextTurn + 1) % target.backends.length;
        tried.add(backend);
        this.#send(backend, req, res, headers, body, attempt);
      };
      attempt();
    });
  }

  /**
   * Forwards the request to one replica. The body is sent only once the connection is open:
   * until then nothing reached the replica, so a failure calls `next` to try another one. A
   * body held whole is sent again on any failure before an answer: a kept-alive connection to
   * a replica that just died fails only when written to, and the instance API has no request
   * that changes data, so sending it again is safe.
   */
  #send(
    backend: Backend,
    req: IncomingMessage,
    res: ServerResponse,
    headers: IncomingHttpHeaders,
    body: RequestBody,
    next: () => void,
  ): void {
    backend.inFlight += 1;
    let released = false;
    const release = () => {
      if (released) return;
      released = true;
      backend.inFlight -= 1;
    };
    let reached = false;
    const upstream = request({
      host: backend.host,
      port: backend.port,
      method: req.method,
      path: req.url,
      headers,
      agent: backend.agent,
    });
    upstream.on('socket', (socket) => {
      const sendBody = () => {
        reached = true;
        if (body.rest === null) {
          upstream.end(body.whole);
          return;
        }
        for (const chunk of body.head) upstream.write(chunk);
        // pipe, not pipeline: an upstream failure must leave the client's socket open for the 503.
        body.rest.pipe(upstream);
      };
      if (socket.connecting) socket.once('connect', sendBody);
      else sendBody();
    });
    upstream.on('response', (answer) => {
      // A live query's event stream lasts as long as its client: were it counted in flight,
      // least-in-flight would send every query away from the replicas holding streams.
      if (answer.headers['content-type']?.startsWith('text/event-stream')) release();
      res.writeHead(
        answer.statusCode ?? 502,
        answer.statusMessage,
        endToEndHeaders(answer.headers),
      );
      pipeline(answer, res, release);
    });
    upstream.on('error', (error) => {
      release();
      if (res.headersSent || res.destroyed) {
        res.destroy();
        return;
      }
      // Nothing reached the replica, or the whole request can be sent again (above).
      if (!reached || body.rest === null) {
        next();
        return;
      }
      this.#log.warn(
        { port: backend.port, code: (error as NodeJS.ErrnoException).code },
        'endpoint lost its instance mid-request',
      );
      req.resume();
      sendUnavailable(res, UNREACHABLE_MESSAGE);
    });
    // The client went away before its answer was complete: abort the upstream request, so the
    // instance sees the disconnect and cancels the query.
    res.on('close', () => {
      release();
      if (!res.writableFinished) upstream.destroy();
    });
    req.on('error', () => upstream.destroy());
  }
}

/** How a proxied request's span failed: its `error.type` (a status or `aborted`), never a message. */
class ProxySpanError extends Error {
  readonly code: string;
  constructor(code: string) {
    super(code);
    this.code = code;
  }
}

/**
 * A request's body as the router holds it: `whole`, when it was read to its end (it can be
 * sent again), or `head`, the chunks read so far, and `rest`, the request streaming the others.
 */
type RequestBody =
  | { readonly whole: Buffer; readonly rest: null }
  | { readonly head: readonly Buffer[]; readonly rest: IncomingMessage };

/**
 * Reads the request's body whole when it is at most `limit` bytes; past that, hands over what
 * it read and the request streaming the rest. A client that goes away before the end of its
 * body is dropped: nothing is forwarded.
 */
function readBody(req: IncomingMessage, limit: number, done: (body: RequestBody) => void): void {
  const head: Buffer[] = [];
  let bytes = 0;
  const stop = () => {
    req.off('data', onData);
    req.off('end', onEnd);
    req.off('error', stop);
    req.off('close', stop);
  };
  const onData = (chunk: Buffer) => {
    head.push(chunk);
    bytes += chunk.length;
    if (bytes > limit) {
      req.pause();
      stop();
      done({ head, rest: req });
    }
  };
  const onEnd = () => {
    stop();
    done({ whole: head.length === 1 ? (head[0] as Buffer) : Buffer.concat(head), rest: null });
  };
  req.on('data', onData);
  req.once('end', onEnd);
  req.once('error', stop);
  req.once('close', stop);
}

function listen(server: Server, port: number): Promise<number> {
  return new Promise((resolve, reject) => {
    server.once('error', reject);
    server.listen({ port, host: '127.0.0.1', reusePort: true }, () => {
      server.off('error', reject);
      const address = server.address();
      resolve(typeof address === 'object' && address ? address.port : port);
    });
  });
}
