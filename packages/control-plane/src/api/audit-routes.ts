import type { ApiServer } from './build-api.ts';
import type { ApiContext } from './context.ts';

export function registerAuditRoutes(_app: ApiServer, _context: ApiContext): void {}
