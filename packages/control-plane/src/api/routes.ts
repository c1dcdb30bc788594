import { registerBuildsRoutes } from '../resources/builds/builds-routes.ts';
import { registerConnectionsRoutes } from '../resources/connections/connections-routes.ts';
import { registerActionsRoutes } from '../resources/databases/database-actions-routes.ts';
import { registerDatabasesRoutes } from '../resources/databases/databases-routes.ts';
import { registerInstanceRoutes } from '../resources/instance/instance-routes.ts';
import { registerAccountRoutes } from './account-routes.ts';
import { registerAdminRoutes } from './admin-routes.ts';
import { registerApiKeysRoutes } from './api-keys-routes.ts';
import type { ApiServer } from './api-server.ts';
import { registerAuditRoutes } from './audit-routes.ts';
import { registerAuthRoutes } from './auth-routes.ts';
import { registerBillingRoutes } from './billing-routes.ts';
import type { ApiContext } from './context.ts';
import { registerManagementKeysRoutes } from './management-keys-routes.ts';
import { registerNotificationsRoutes } from './notifications-routes.ts';
import { registerSystemRoutes } from './system-routes.ts';
import { registerTeamRoutes } from './team-routes.ts';
import { registerWebhooksRoutes } from './webhooks-routes.ts';

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
