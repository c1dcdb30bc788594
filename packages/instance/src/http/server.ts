import { createServer, type IncomingMessage, type ServerResponse } from 'node:http';
import cors from '@fastify/cors';
import { type CompiledSchema, QueryEngine } from '@replix/engine';
import type { KeyScope } from '@replix/instance-protocol';
import { createClientErrorHandler, HTTP_LIMITS, type HttpLimits } from '@replix/runtime';
import { unexpectedErrorForLog, wellFormedRequestId } from '@replix/runtime/logger';
import { traceRequests, tracingActive } from '@replix/runtime/tracing';
import Fastify, {
  type FastifyReply,
  type FastifyRequest,
  LogController,
  type onRequestHookHandler,
} from 'fastify';
import type { Logger } from 'pino';
import { errorResponse, InstanceError } from '../errors.ts';
import type { ChangeFeed } from '../replication/change-feed.ts';
import { registerLiveQueryGauges } from '../threads/live-query-metrics.ts';
import { InstanceMetrics, type ThreadMetrics } from '../threads/metrics.ts';
import type { QueryAdmission } from '../threads/query-admission.ts';
import type { ServedState, SyncControl } from '../threads/served-state.ts';
import type { ApiKeyVerifier } from './api-keys.ts';
import { registerChangeFeedRoute } from './change-feed-route.ts';
import { ClientMemory } from './client-memory.ts';
import { EtagCache } from './etag.ts';
import { keyCheckFor } from './key-refusal.ts';
import { lazyChildLoggerFactory } from './lazy-child-logger.ts';
import { generateOpenApi } from './openapi.ts';
import { queryListener } from './query-listener.ts';
import { defaultAdmission, registerQueryRoutes } from './query-route.ts';
import type { RateLimiter } from './rate-limiter.ts';
import { logRequest } from './request-log.ts';
import { describeSchema } from './schema-document.ts';
import { SendWatch } from './send-watch.ts';

export interface InstanceServerOptions {
  /** The snapshot controller, or a query thread's view of it. */
  readonly controller: ServedState;
  readonly keys: ApiKeyVerifier;
  /** `<release>-<build hash>`: `meta.version` and the `X-Service-Version` header. */
  readonly version: string;
  readonly maxBodyBytes: number;
  /** Replication pause and resume (they take effect at the next sync tick). */
  readonly sync: SyncControl;
  readonly log: Logger;
  /** The gate queries pass before they run (`defaultAdmission()` over the working memory unless given). */
  readonly admission?: QueryAdmission;
  /** The HTTP server's header size and timeouts (`HTTP_LIMITS` unless given). */
  readonly httpLimits?: HttpLimits;
  /** With query threads: this thread's metrics, and `/metrics` as the instance's totals. */
  readonly threadMetrics?: ThreadMetrics;
  /** The leader's change feed to follower replicas (`GET /internal/changes`), if it keeps one. */
  readonly changeFeed?: ChangeFeed;
  /** Per-key rate limits of the query routes (shared with the other query threads); none: off. */
  readonly rateLimiter?: RateLimiter | undefined;
}

declare module 'fastify' {
  interface FastifyContextConfig {
    /** The key scope a route needs; routes without one are public. */
    auth?: KeyScope;
  }
}

/** The `onRequest` hook of a route that needs a key of scope `needed` (`keyCheckFor`). */
function keyCheck(
  keys: ApiKeyVerifier,
  needed: KeyScope,
  limiter: RateLimiter | undefined,
): onRequestHookHandler {
  const refusalOf = keyCheckFor(needed, limiter);
  return (request, reply, done) => {
    const refusal = refusalOf(keys.identify(request.headers.authorization), reply);
    if (!refusal) return done();
    // Refused after the bytes at hand are parsed: a request the HTTP parser rejects in the
    // same packet (a malformed body) gets the parser's 400, not a 401 it could not follow.
    queueMicrotask(() => done(refusal));
  };
}

/** A `node:http` request listener. */
type Listener = (request: IncomingMessage, response: ServerResponse) => void;

let requestCount = 0;

/** The caller's well-formed `X-Request-Id`, else a counter's, as Fastify's default names them. */
function requestIdOf(request: IncomingMessage): string {
  const given = request.headers['x-request-id'];
  if (wellFormedRequestId(given)) return given;
  requestCount = (requestCount + 1) % Number.MAX_SAFE_INTEGER;
  return `req-${requestCount.toString(36)}`;
}

/** Fastify's default for the servers it makes (above a load balancer's usual 60 s). */
const KEEP_ALIVE_TIMEOUT_MS = 72_000;

/** Response fields a browser's script may read across origins. */
const EXPOSED_HEADERS = [
  'etag',
  'x-service-version',
  'x-request-id',
  'server-timing',
  'ratelimit',
  'ratelimit-policy',
  'retry-after',
];

/** A request for no route; it has no route's hooks, so its line is logged as it is sent. */
function notFound(request: FastifyRequest, reply: FastifyReply): void {
  reply.code(404).send({
    error: {
      code: 'not_found',
      message: `No endpoint ${request.method} ${request.url.split('?')[0]}.`,
    },
  });
  logRequest(request, reply, () => {});
}

/** The instance HTTP API (docs/instance-api.md), as a Fastify app (not yet listening). */
export async function buildInstanceServer(options: InstanceServerOptions) {
  const { controller, keys, version, maxBodyBytes } = options;
  const schema: CompiledSchema = controller.schema;
  const engine = new QueryEngine(schema);
  // Queries and the snapshot share the instance's memory: the gate admits queries into what the
  // snapshot leaves, and the cap counts the queries in flight.
  // Bytes held for clients after their answers are computed (send buffers, live-query events
  // and texts) count beside the running queries: in the gate's budget and against the cap.
  const clientMemory = new ClientMemory(() => controller.queryWorkingBytes());
  const admission =
    options.admission ??
    defaultAdmission(() => controller.queryWorkingBytes() - clientMemory.totalBytes);
  controller.countQueryMemory(() => admission.inFlightBytes + clientMemory.totalBytes);
  controller.countClientMemory(() => clientMemory.totalBytes);
  const metrics = new InstanceMetrics(
    controller,
    admission,
    options.threadMetrics?.thread,
    clientMemory,
  );
  options.threadMetrics?.attach(metrics.registry);
  const openApi = JSON.stringify(generateOpenApi(schema, { version }));
  const schemaDocument = JSON.stringify(describeSchema(schema));
  const etags = new EtagCache(controller.bootId);

  const httpLimits = options.httpLimits ?? HTTP_LIMITS;
  // A client that asks and never reads is cut after the send timeout, and its bytes freed.
  const sendWatch = new SendWatch({
    timeoutMs: httpLimits.send_timeout_ms,
    onStalled: (stalled) => {
      metrics.recordSendTimeout();
      options.log.warn(
        {
          what: stalled.what,
          key_id: stalled.keyId,
          waiting_bytes: stalled.waitingBytes,
          send_timeout_ms: httpLimits.send_timeout_ms,
        },
        'send timed out: the client took none of the bytes waiting for it; connection closed',
      );
    },
  });
  // `GET /query` is taken straight off node:http once the routes exist (query-listener.ts);
  // every other request, and every request before then, goes to Fastify.
  let takeQueries: Listener | undefined;
  let fastifyListener: Listener | undefined;
  const app = Fastify({
    serverFactory: (handler) => {
      fastifyListener = handler;
      const server = createServer(
        {
          maxHeaderSize: httpLimits.max_header_bytes,
          headersTimeout: httpLimits.headers_timeout_ms,
          connectionsCheckingInterval: httpLimits.timeout_check_interval_ms,
          // A request without a body (every GET) arrives ended: Node sets up no stream events
          // for it, 8% of a PK lookup's instructions (bench:http-instructions). Nothing here
          // reads a bodyless request's stream; a client that leaves is told by the response.
          optimizeEmptyRequests: true,
        },
        (request, response) => (takeQueries ?? handler)(request, response),
      );
      // What Fastify sets on a server it makes itself.
      server.requestTimeout = httpLimits.request_timeout_ms;
      server.keepAliveTimeout = KEEP_ALIVE_TIMEOUT_MS;
      return server;
    },
    loggerInstance: options.log,
    // Request lines are written by request-log.ts (method, path, status, time), not Fastify.
    logController: new LogController({ disableRequestLogging: true }),
    childLoggerFactory: lazyChildLoggerFactory,
    bodyLimit: maxBodyBytes,
    // A caller's X-Request-Id names the request in the log only when short and plain.
    requestIdHeader: false,
    genReqId: requestIdOf,
    return503OnClosing: true,
    clientErrorHandler: createClientErrorHandler(version, httpLimits),
  });

  // With tracing on: a span per query, and per request continuing a caller's trace (the
  // control plane's health checks during a deploy); the health monitor's polls make none.
  traceRequests(app, {
    traced: (request) =>
      request.routeOptions.url === '/query' || request.headers.traceparent !== undefined,
  });

  // Hooks take a callback rather than being async: no promise per hook per request. The
  // version header is set first, so every answer carries it, refusals included (Fastify keeps
  // headers set before an error when it sends the error's answer). The CORS fields go only on
  // the answers of requests with an `Origin` (every cross-origin request from a browser has
  // one): `Vary: Origin` on every answer tells caches the two kinds apart.
  const everyAnswer = { 'x-service-version': version, vary: 'Origin' };
  const crossOriginHeaders = {
    'access-control-allow-origin': '*',
    'access-control-expose-headers': EXPOSED_HEADERS.join(', '),
  };
  const crossOriginAnswer = { ...everyAnswer, ...crossOriginHeaders };
  app.addHook('onRequest', (request, reply, done) => {
    reply.headers(request.headers.origin === undefined ? everyAnswer : crossOriginAnswer);
    done();
  });
  // One line per answered request, on the routes that log at info: a query route logs at warn,
  // and its failures are logged by the error handler, so it runs no hook after each answer.
  app.addHook('onRoute', (route) => {
    if (route.logLevel === 'warn') return;
    const own = route.onResponse === undefined ? [] : [route.onResponse].flat();
    route.onResponse = [logRequest, ...own];
  });
  app.setNotFoundHandler(notFound);

  // Browsers may call the instance from any origin (the dashboard's playground, a customer's
  // web app): keys travel in the Authorization header, never in cookies, so `*` grants nothing
  // a caller does not already hold. A simple request's CORS fields never change: they are
  // written by the one hook every request runs (above), beside the version. @fastify/cors
  // answers preflights only, in a scope of its own: its hook, which works out the same fields
  // afresh for each request, runs for OPTIONS requests alone.
  await app.register(async (preflight) => {
    await preflight.register(cors, {
      origin: '*',
      methods: ['GET', 'HEAD', 'POST'],
      allowedHeaders: [
        'authorization',
        'content-type',
        'if-none-match',
        'last-event-id',
        'x-request-id',
      ],
      exposedHeaders: EXPOSED_HEADERS,
      maxAge: 600,
    });
  });
  // The query body is plain text whatever the Content-Type says (or if it says nothing).
  app.removeAllContentTypeParsers();
  app.addContentTypeParser('*', { parseAs: 'string' }, (_request, body, done) => done(null, body));

  // The key check is a hook of the routes that name a scope (`config.auth`), added with the
  // route: public routes pay nothing, and no request reads its route's options (which Fastify
  // builds afresh on each read).
  app.addHook('onRoute', (route) => {
    const needed = route.config?.auth;
    if (!needed) return;
    const own = route.onRequest === undefined ? [] : [route.onRequest].flat();
    route.onRequest = [keyCheck(keys, needed, options.rateLimiter), ...own];
  });

  app.setErrorHandler((error, request, reply) => {
    let mapped = error;
    const code = (error as { code?: string }).code;
    if (code === 'FST_ERR_CTP_BODY_TOO_LARGE') {
      mapped = new InstanceError(
        'payload_too_large',
        `The query is larger than the limit of ${maxBodyBytes} bytes.`,
      );
    } else if (
      code === 'FST_ERR_CTP_EMPTY_JSON_BODY' ||
      code === 'FST_ERR_CTP_INVALID_MEDIA_TYPE'
    ) {
      mapped = new InstanceError(
        'bad_request',
        'The request body could not be read as query text.',
      );
    } else if (code === 'FST_ERR_CTP_INVALID_CONTENT_LENGTH' || code === 'ECONNRESET') {
      // The body ended short of its Content-Length, or the connection closed mid-body (the
      // client left, or the request timeout ended it): the client's doing, not an internal one.
      mapped = new InstanceError('bad_request', 'The request body was not received completely.');
    }
    const { status, body } = errorResponse(mapped);
    if (status >= 500) {
      // An unexpected failure (internal_error) is logged with its first frames (runtime logger).
      const err = body.error.code === 'internal_error' ? unexpectedErrorForLog(error) : error;
      request.log.error({ err }, 'request failed');
    }
    reply.code(status).type('application/json').send(body);
  });

  const queries = registerQueryRoutes(app, {
    engine,
    controller,
    etags,
    metrics,
    admission,
    clientMemory,
    sendWatch,
    version,
    maxBodyBytes,
    keys,
  });
  const { live } = queries;
  registerLiveQueryGauges(metrics.registry, live);
  let closing = false;
  // Live queries never end on their own: closing ends them, so the drain is not held up.
  app.addHook('preClose', (done) => {
    closing = true;
    live.closeAll();
    done();
  });
  // With tracing on, query requests go through Fastify, whose hooks give each its span.
  if (fastifyListener && !tracingActive()) {
    takeQueries = queryListener(fastifyListener, {
      keys,
      rateLimiter: options.rateLimiter,
      routes: queries,
      headers: everyAnswer,
      crossOriginHeaders,
      log: options.log,
      closing: () => closing,
    });
  }
  app.addHook('onClose', (_instance, done) => {
    sendWatch.close();
    done();
  });

  if (options.changeFeed) registerChangeFeedRoute(app, options.changeFeed, controller);
  app.get('/openapi.json', (_request, reply) => reply.type('application/json').send(openApi));
  app.get('/schema', { config: { auth: 'query' } }, (_request, reply) =>
    reply.type('application/json').send(schemaDocument),
  );

  app.get('/health', (_request, reply) => {
    const status = controller.health();
    if (status === 'loading' || status === 'failed')
      return reply.code(503).send(controller.detail());
    return reply.send({ status });
  });
  app.get('/health/detail', { config: { auth: 'admin' } }, (_request, reply) => {
    const status = controller.health();
    return reply
      .code(status === 'loading' || status === 'failed' ? 503 : 200)
      .send({ ...controller.detail(), live_queries: live.report() });
  });
  app.get('/metrics', { config: { auth: 'admin' } }, async (_request, reply) => {
    const text = options.threadMetrics
      ? await options.threadMetrics.gather()
      : await metrics.registry.metrics();
    return reply.type(metrics.registry.contentType).send(text);
  });

  app.post<{ Querystring: { wait?: string } }>(
    '/reload',
    { config: { auth: 'admin' } },
    async (request, reply) => {
      const { done } = await controller.startReload();
      if (request.query.wait === 'true') {
        try {
          await done;
        } catch {
          throw new Error('reload failed');
        }
        return reply.send({ reloaded: true, swap_count: controller.current()?.swapCount ?? 0 });
      }
      done.catch(() => {
        // Logged by the controller; the instance keeps serving the previous snapshot.
      });
      return reply.code(202).send({ reloading: true });
    },
  );
  app.post('/replication/pause', { config: { auth: 'admin' } }, async (_request, reply) => {
    await options.sync.pause();
    return reply.send({ replication_paused: true });
  });
  app.post('/replication/resume', { config: { auth: 'admin' } }, async (_request, reply) => {
    await options.sync.resume();
    return reply.send({ replication_paused: false });
  });

  return app;
}
