import type { ControlPlaneMetrics } from '../roles/control-plane-metrics.ts';
import type { ApiServer } from './api-server.ts';
import { METRICS_PATH, type MetricsEndpoint } from './metrics-endpoint.ts';

/**
 * Counts every request the API answers (by route template, method and status class, with its
 * time) and serves `GET /metrics` on the API's port: public to the API's own auth, out of the
 * OpenAPI document, guarded by the scrape token alone (`metrics-endpoint.ts`).
 */
export function registerMetricsRoutes(
  app: ApiServer,
  metrics: ControlPlaneMetrics,
  endpoint: MetricsEndpoint,
): void {
  app.addHook('onResponse', (request, reply, done) => {
    metrics.recordRequest(
      request.routeOptions.url,
      request.method,
      reply.statusCode,
      reply.elapsedTime / 1000,
    );
    done();
  });
  app.get(
    METRICS_PATH,
    { config: { public: true }, schema: { hide: true } },
    async (request, reply) => {
      const answer = await endpoint.answer(request.headers.authorization);
      reply.status(answer.status).header('cache-control', 'no-store');
      if (answer.status !== 200) {
        if (answer.status === 401) reply.header('www-authenticate', 'Bearer');
        return reply.send(answer.body);
      }
      return reply.type(answer.contentType).send(answer.body);
    },
  );
}
