import type { ApiServer } from './build-api.ts';
import type { ApiContext } from './context.ts';

export function registerConnectionsRoutes(_app: ApiServer, _context: ApiContext): void {}
