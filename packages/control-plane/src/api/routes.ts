import { registerAccountRoutes } from '../resources/account/account-routes.ts';
import { registerAdminRoutes } from '../resources/admin/admin-routes.ts';
import { registerApiKeysRoutes } from '../resources/api-keys/api-keys-routes.ts';
import { registerAuditRoutes } from '../resources/audit/audit-routes.ts';
import { registerAuthRoutes } from '../resources/auth/auth-routes.ts';
import { registerBillingRoutes } from '../resources/billing/billing-routes.ts';
import { registerBuildsRoutes } from '../resources/builds/builds-routes.ts';
import { registerConnectionsRoutes } from '../resources/connections/connections-routes.ts';
import { registerActionsRoutes } from '../resources/databases/database-actions-routes.ts';
import { registerDatabasesRoutes } from '../resources/databases/databases-routes.ts';
import { registerInstanceRoutes } from '../resources/instance/instance-routes.ts';
import { registerManagementKeysRoutes } from '../resources/management-keys/management-keys-routes.ts';
import { registerNotificationsRoutes } from '../resources/notifications/notifications-routes.ts';
import { registerSystemRoutes } from '../resources/system/system-routes.ts';
import { registerTeamRoutes } from '../resources/team/team-routes.ts';
import { registerWebhooksRoutes } from '../resources/webhooks/webhooks-routes.ts';
import type { ApiServer } from './api-server.ts';
import type { ApiContext } from './context.ts';

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
