import { Buffer } from 'node:buffer';
import { createServer, type IncomingMessage, type ServerResponse } from 'node:http';
import type { AddressInfo } from 'node:net';
import { METRICS_PATH, type MetricsAnswer, type MetricsEndpoint } from '../api/metrics-endpoint.ts';
import { PROBE_PATHS, type ProbeAnswer, type ProcessProbes } from '../api/process-probes.ts';

export interface ProbeServer {
  /** `http://host:port`, the port it holds. */
  readonly url: string;
  close(): Promise<void>;
}

/** Slow clients are cut off: a probe is a few bytes each way. */
const REQUEST_TIMEOUT_MS = 5000;

type Answer = ProbeAnswer | MetricsAnswer | { status: 404; body: object };

function send(response: ServerResponse, answer: Answer): void {
  const body = typeof answer.body === 'string' ? answer.body : JSON.stringify(answer.body);
  response.writeHead(answer.status, {
    'content-type':
      'contentType' in answer ? answer.contentType : 'application/json; charset=utf-8',
    ...(answer.status === 401 ? { 'www-authenticate': 'Bearer' } : {}),
    'content-length': Buffer.byteLength(body),
    'cache-control': 'no-store',
  });
  response.end(response.req.method === 'HEAD' ? undefined : body);
}

async function answer(
  probes: ProcessProbes,
  metrics: MetricsEndpoint | undefined,
  request: IncomingMessage,
): Promise<Answer | null> {
  if (request.method !== 'GET' && request.method !== 'HEAD') return null;
  const path = (request.url ?? '').split('?')[0];
  if (path === PROBE_PATHS.live) return probes.live();
  if (path === PROBE_PATHS.ready) return probes.ready();
  if (path === METRICS_PATH && metrics) return metrics.answer(request.headers.authorization);
  return null;
}

/**
 * The small listener a role without the API (reconciler, builder, health monitor) answers its
 * `/live` and `/ready` probes on (`REPLIX_PROBE_PORT`), and `/metrics` with the scrape token
 * when `metrics` is given. It serves nothing else; any other request gets 404 in the control
 * plane's envelope.
 */
export async function startProbeServer(
  probes: ProcessProbes,
  where: { host: string; port: number },
  metrics?: MetricsEndpoint,
): Promise<ProbeServer> {
  const server = createServer({ requestTimeout: REQUEST_TIMEOUT_MS }, (request, response) => {
    // The body, if any, is not read; the answer does not depend on it.
    request.resume();
    answer(probes, metrics, request).then(
      (result) =>
        send(
          response,
          result ?? {
            status: 404,
            body: {
              error: 'not_found',
              message: 'Only GET /live, GET /ready and GET /metrics are served here.',
            },
          },
        ),
      () =>
        send(response, { status: 503, body: { error: 'not_ready', message: 'The probe failed.' } }),
    );
  });
  server.headersTimeout = REQUEST_TIMEOUT_MS;
  await new Promise<void>((resolve, reject) => {
    server.once('error', reject);
    server.listen(where.port, where.host, () => {
      server.off('error', reject);
      resolve();
    });
  });
  const { port } = server.address() as AddressInfo;
  const host = where.host.includes(':') ? `[${where.host}]` : where.host;
  return {
    url: `http://${host}:${port}`,
    close: () =>
      new Promise<void>((resolve) => {
        server.close(() => resolve());
        server.closeAllConnections();
      }),
  };
}
