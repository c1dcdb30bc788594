import type { ApiServer } from './api-server.ts';
import { PROBE_PATHS, type ProcessProbes } from './process-probes.ts';

/**
 * `/live` and `/ready` on the API's own port, for a load balancer or the kubelet: public, out of
 * the OpenAPI document, never cached. In a process that also runs other roles, `/ready` waits
 * for their loops too.
 */
export function registerProbeRoutes(app: ApiServer, probes: ProcessProbes): void {
  const options = { config: { public: true }, schema: { hide: true } } as const;
  app.get(PROBE_PATHS.live, options, (_request, reply) => {
    const { status, body } = probes.live();
    return reply.status(status).header('cache-control', 'no-store').send(body);
  });
  app.get(PROBE_PATHS.ready, options, async (_request, reply) => {
    const { status, body } = await probes.ready();
    return reply.status(status).header('cache-control', 'no-store').send(body);
  });
}
