import type { FastifyReply, FastifyRequest } from 'fastify';

/** Paths polled by machines (health monitor, Prometheus): logged at debug, not info. */
const POLLED_PATHS = new Set(['/health', '/health/detail', '/metrics']);

/**
 * An `onResponse` hook that logs one line per answered request, saying what a person looks
 * for: method, path (never the query string, which may carry a query or a key), status and
 * duration. It replaces Fastify's "incoming request"/"request completed" pair (turned off with
 * a `LogController` that has `disableRequestLogging`). Health checks and metrics scrapes go to
 * debug so they do not bury the requests that matter; a Kubernetes kubelet's probes
 * (`kube-probe/…`) are not logged.
 */
export async function logRequest(request: FastifyRequest, reply: FastifyReply): Promise<void> {
  // A cluster's probes (every pod, every few seconds) would bury even the debug lines.
  if (String(request.headers['user-agent'] ?? '').startsWith('kube-probe/')) return;
  const path = request.url.split('?', 1)[0] ?? '';
  const status = reply.statusCode;
  const ms = Math.round(reply.elapsedTime * 10) / 10;
  const level = status >= 500 ? 'warn' : POLLED_PATHS.has(path) ? 'debug' : 'info';
  request.log[level](
    { method: request.method, path, status, ms },
    `${request.method} ${path} ${status} ${ms} ms`,
  );
}
