import { registerApiKeysRoutes } from '../resources/api-keys/api-keys-routes.ts';
import { registerManagementKeysRoutes } from '../resources/management-keys/management-keys-routes.ts';
import { registerWebhooksRoutes } from '../resources/webhooks/webhooks-routes.ts';
import { registerAccountRoutes } from './account-routes.ts';
import { registerActionsRoutes } from './actions-routes.ts';
import { registerAdminRoutes } from './admin-routes.ts';
import type { ApiServer } from './api-server.ts';
import { registerAuditRoutes } from './audit-routes.ts';
import { registerAuthRoutes } from './auth-routes.ts';
import { registerBillingRoutes } from './billing-routes.ts';
import { registerBuildsRoutes } from './builds-routes.ts';
import { registerConnectionsRoutes } from './connections-routes.ts';
import type { ApiContext } from './context.ts';
import { registerDatabasesRoutes } from './databases-routes.ts';
import { registerInstanceRoutes } from './instance-routes.ts';
import { registerNotificationsRoutes } from './notifications-routes.ts';
import { registerSystemRoutes } from './system-routes.ts';
import { registerTeamRoutes } from './team-routes.ts';

/** Every /v1 route, one module per resource. */
export function registerRoutes(app: ApiServer, context: ApiContext): void {
  registerConnectionsRoutes(app, context);
  registerDatabasesRoutes(app, context);
  registerActionsRoutes(app, context);
  registerBuildsRoutes(app, context);
  registerInstanceRoutes(app, context);
  registerApiKeysRoutes(app, context);
  registerAuditRoutes(app, context);
  registerNotificationsRoutes(app, context);
  registerSystemRoutes(app, context);
  registerManagementKeysRoutes(app, context);
  registerAdminRoutes(app, context);
  registerBillingRoutes(app, context);
  registerAccountRoutes(app, context);
  registerWebhooksRoutes(app, context);
  registerTeamRoutes(app, context);
  registerAuthRoutes(app, context);
}
