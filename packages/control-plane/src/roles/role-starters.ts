import { startBuilder } from '../builder/builder-role.ts';
import { introspectSource } from '../builder/introspect-source.ts';
import { createBuildRunner } from '../drivers/create-driver.ts';
import { startHealthMonitor } from '../health/health-monitor-role.ts';
import { startReconciler } from '../reconciler/reconciler-role.ts';
import { startWebhookDeliverer } from '../webhooks/webhook-deliverer.ts';
import type { RoleContext, RoleName, RunningRole } from './role.ts';

/** How each background role starts; the api role is started by startControlPlane itself. */
export const ROLE_STARTERS: Record<
  Exclude<RoleName, 'api'>,
  (context: RoleContext) => Promise<RunningRole>
> = {
  // The reconciler process also delivers webhooks (webhooks/webhook-deliverer.ts).
  reconciler: async (context) => {
    const deliverer = await startWebhookDeliverer(context);
    const reconciler = await startReconciler(context);
    return {
      async close() {
        await reconciler.close();
        await deliverer.close();
      },
    };
  },
  // With the kubernetes driver, builds run as Jobs; otherwise in the builder's process.
  builder: (context) => {
    const runner = createBuildRunner(context.config, context.log, context.db);
    return startBuilder(context, { introspect: introspectSource, ...(runner ? { runner } : {}) });
  },
  'health-monitor': startHealthMonitor,
};
