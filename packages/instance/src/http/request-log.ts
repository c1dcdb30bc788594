import type {
  FastifyBaseLogger,
  FastifyReply,
  FastifyRequest,
  HookHandlerDoneFunction,
} from 'fastify';
import { levels } from 'pino';

/** Paths polled by machines (health monitor, Prometheus): logged at debug, not info. */
const POLLED_PATHS = new Set(['/health', '/health/detail', '/metrics']);

type LineLevel = 'debug' | 'info' | 'warn';

/** True when `log` writes lines of `level` (the route's own level may be above the app's). */
function writes(log: FastifyBaseLogger, level: LineLevel): boolean {
  const threshold = levels.values[log.level];
  return threshold === undefined || threshold <= (levels.values[level] as number);
}

/**
 * An `onResponse` hook that logs one line per answered request, saying what a person looks
 * for: method, path (never the query string, which may carry a query or a key), status and
 * duration. It replaces Fastify's "incoming request"/"request completed" pair (turned off with
 * a `LogController` that has `disableRequestLogging`). Health checks and metrics scrapes go to
 * debug so they do not bury the requests that matter; a Kubernetes kubelet's probes
 * (`kube-probe/…`) are not logged.
 */
export function logRequest(
  request: FastifyRequest,
  reply: FastifyReply,
  done: HookHandlerDoneFunction,
): void {
  done();
  const status = reply.statusCode;
  // Decided before any string is built: a route logging at warn (queries) pays nothing here.
  if (!writes(request.log, status >= 500 ? 'warn' : 'info')) return;
  // A cluster's probes (every pod, every few seconds) would bury even the debug lines.
  if (String(request.headers['user-agent'] ?? '').startsWith('kube-probe/')) return;
  const path = request.url.split('?', 1)[0] ?? '';
  const level: LineLevel = status >= 500 ? 'warn' : POLLED_PATHS.has(path) ? 'debug' : 'info';
  if (!writes(request.log, level)) return;
  const ms = Math.round(reply.elapsedTime * 10) / 10;
  request.log[level](
    { method: request.method, path, status, ms },
    `${request.method} ${path} ${status} ${ms} ms`,
  );
}
