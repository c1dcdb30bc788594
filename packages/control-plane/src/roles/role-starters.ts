import { createBuildRunner } from '../adapters/drivers/create-driver.ts';
import { BUILD_LEASE_MS } from '../adapters/store/build-queue.ts';
import { credentialFromStore } from '../application/builder/build-source-credential.ts';
import { startBuilder } from '../application/builder/builder-role.ts';
import { introspectSource } from '../application/builder/introspect-source.ts';
import { startHealthMonitor } from '../application/health/health-monitor-role.ts';
import { startReconciler } from '../application/reconciler/reconciler-role.ts';
import { startWebhookDeliverer } from '../application/webhook-delivery/webhook-deliverer.ts';
import type { RoleName } from '../domain/role-names.ts';
import type { LoopPulse } from './loop-pulse.ts';
import type { RoleContext, RunningRole } from './role.ts';

export interface RoleStarter {
  /** How often the role's loop reports to its pulse at the slowest, when it works normally. */
  loopPeriodMs(context: RoleContext): number;
  start(context: RoleContext, pulse: LoopPulse): Promise<RunningRole>;
}

/** How each background role starts; the api role is started by startControlPlane itself. */
export const ROLE_STARTERS: Record<Exclude<RoleName, 'api'>, RoleStarter> = {
  reconciler: {
    loopPeriodMs: (context) => context.config.reconcileIntervalMs,
    // The reconciler process also delivers webhooks (webhooks/webhook-deliverer.ts).
    async start(context, pulse) {
      const deliverer = await startWebhookDeliverer(context);
      const reconciler = await startReconciler(context, pulse);
      return {
        async close() {
          await reconciler.close();
          await deliverer.close();
        },
      };
    },
  },
  builder: {
    // While a build runs, only its lease renewals (a third of the lease) report.
    loopPeriodMs: () => BUILD_LEASE_MS / 3,
    // With the kubernetes driver, builds run as Jobs; otherwise in the builder's process.
    start: async (context, pulse) => {
      const runner = await createBuildRunner(
        context.config,
        context.log,
        context.db,
        credentialFromStore(context.db, context.secrets),
      );
      return startBuilder(context, {
        introspect: introspectSource,
        pulse,
        ...(runner ? { runner } : {}),
      });
    },
  },
  'health-monitor': {
    loopPeriodMs: (context) => context.config.healthIntervalMs,
    start: (context, pulse) => startHealthMonitor(context, pulse),
  },
};
