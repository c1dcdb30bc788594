import type { IncomingMessage, Server, ServerResponse } from 'node:http';
import type {
  FastifyBaseLogger,
  FastifyInstance,
  FastifyRequest,
  FastifyTypeProvider,
  RouteHandlerMethod,
} from 'fastify';
import { activeTracing, errorType, type Span } from './tracing.ts';

/** The server span of each traced request, for the handler's own attributes (`requestSpan`). */
const spans = new WeakMap<FastifyRequest, Span>();

export interface RequestSpanOptions {
  /** Which requests get a span (all unless given). */
  readonly traced?: (request: FastifyRequest) => boolean;
}

/** The span of `request`, when tracing is on and the request is traced. */
export function requestSpan(request: FastifyRequest): Span | undefined {
  return spans.get(request);
}

/**
 * With tracing on, gives each request a server span named `<method> <route>` (the route's
 * pattern, never the URL, which may carry ids and query text), continuing the caller's
 * `traceparent`; route handlers run inside it, so the spans and outgoing calls they make join
 * its trace. With tracing off it adds nothing: the request path stays as cheap as it was.
 * Register it before the routes (it wraps their handlers) and before hooks that may refuse a
 * request, so refusals get their span too.
 */
export function traceRequests<Log extends FastifyBaseLogger, Provider extends FastifyTypeProvider>(
  app: FastifyInstance<Server, IncomingMessage, ServerResponse, Log, Provider>,
  options: RequestSpanOptions = {},
): void {
  const tracing = activeTracing();
  if (!tracing) return;
  const { traced } = options;
  app.addHook('onRequest', (request, reply, done) => {
    if (traced === undefined || traced(request)) {
      const route = request.routeOptions.url;
      const attributes = route
        ? { 'http.request.method': request.method, 'http.route': route }
        : { 'http.request.method': request.method };
      const name = route ? `${request.method} ${route}` : request.method;
      const span = tracing.startServerSpan(name, request.headers, attributes);
      spans.set(request, span);
      // A client gone before the answer was out fails the span as aborted. The response tells
      // it, not the request: a request without a body ends as it arrives, its stream closed
      // without events (the server's `optimizeEmptyRequests`), so Fastify's onRequestAbort,
      // which waits for the request's close, never runs for it.
      const response = reply.raw;
      response.once('close', () => {
        if (response.writableFinished || spans.get(request) !== span) return;
        spans.delete(request);
        tracing.fail(span, 'aborted');
        span.end();
      });
    }
    done();
  });
  app.addHook('onRoute', (route) => {
    const handler = route.handler as (...args: unknown[]) => unknown;
    route.handler = function traced(this: unknown, request, reply) {
      const span = spans.get(request);
      return span
        ? tracing.runIn(span, () => handler.call(this, request, reply))
        : handler.call(this, request, reply);
    } as RouteHandlerMethod;
  });
  app.addHook('onError', (request, _reply, error, done) => {
    spans.get(request)?.setAttribute('error.type', errorType(error));
    done();
  });
  app.addHook('onResponse', (request, reply, done) => {
    const span = spans.get(request);
    if (span) {
      spans.delete(request);
      span.setAttribute('http.response.status_code', reply.statusCode);
      // A server span fails on a 5xx only: a 4xx is the caller's mistake, answered as designed.
      if (reply.statusCode >= 500) tracing.fail(span, String(reply.statusCode));
      span.end();
    }
    done();
  });
}
