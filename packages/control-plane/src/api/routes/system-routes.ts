import { errorResponses } from '../../application/resources/common-schemas.ts';
import { SystemHealth } from '../../application/resources/system/system-schemas.ts';
import { systemHealth } from '../../application/resources/system/system-service.ts';
import type { ApiServer } from '../api-server.ts';
import type { ApiContext } from '../context.ts';

/** The control plane's own health (system-service.ts); any signed-in user may read it. */
export function registerSystemRoutes(app: ApiServer, { db }: ApiContext): void {
  app.get(
    '/system/health',
    {
      schema: {
        tags: ['system'],
        summary: 'Control-plane health: services, builders, queues, sidecars, recent builds',
        response: { 200: SystemHealth, ...errorResponses() },
      },
    },
    async (request) => systemHealth(db, request.principal),
  );
}
