import type { ApiServer } from '../../api/api-server.ts';
import type { ApiContext } from '../../api/context.ts';
import { errorResponses } from '../common-schemas.ts';
import { SystemHealth } from './system-schemas.ts';
import { systemHealth } from './system-service.ts';

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
