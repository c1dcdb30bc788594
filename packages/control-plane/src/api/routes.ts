import type { ApiServer } from './api-server.ts';
import type { ApiContext } from './context.ts';
import { registerAccountRoutes } from './routes/account-routes.ts';
import { registerAdminRoutes } from './routes/admin-routes.ts';
import { registerApiKeysRoutes } from './routes/api-keys-routes.ts';
import { registerAuditRoutes } from './routes/audit-routes.ts';
import { registerAuthRoutes } from './routes/auth-routes.ts';
import { registerBillingRoutes } from './routes/billing-routes.ts';
import { registerBuildsRoutes } from './routes/builds-routes.ts';
import { registerConnectionsRoutes } from './routes/connections-routes.ts';
import { registerActionsRoutes } from './routes/database-actions-routes.ts';
import { registerDatabasesRoutes } from './routes/databases-routes.ts';
import { registerInstanceRoutes } from './routes/instance-routes.ts';
import { registerManagementKeysRoutes } from './routes/management-keys-routes.ts';
import { registerNotificationsRoutes } from './routes/notifications-routes.ts';
import { registerSignInSettingsRoutes } from './routes/sign-in-settings-routes.ts';
import { registerSystemRoutes } from './routes/system-routes.ts';
import { registerTeamRoutes } from './routes/team-routes.ts';
import { registerWebhooksRoutes } from './routes/webhooks-routes.ts';

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
  registerSignInSettingsRoutes(app, context);
}
