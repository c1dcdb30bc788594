import { randomUUID } from 'node:crypto';
import { hostname } from 'node:os';
import process from 'node:process';
import { serviceLogger } from '@replix/runtime/logger';
import { startTracing } from '@replix/runtime/tracing';
import type { Logger } from 'pino';
import { createDriver } from './adapters/drivers/create-driver.ts';
import { PlatformEvents } from './adapters/events/platform-events.ts';
import { startHeartbeat } from './adapters/store/heartbeat-store.ts';
import { markHealthUnknown } from './adapters/store/instance-store.ts';
import { type OpenStore, openStore } from './adapters/store/open-store.ts';
import { SecretBox } from './adapters/store/secret-box.ts';
import type { ApiServer } from './api/api-server.ts';
import { buildApi } from './api/build-api.ts';
import type { ApiContext } from './api/context.ts';
import { MetricsEndpoint } from './api/metrics-endpoint.ts';
import { registerMetricsRoutes } from './api/metrics-routes.ts';
import { registerProbeRoutes } from './api/probe-routes.ts';
import { type ProbeWindows, ProcessProbes } from './api/process-probes.ts';
import { BuiltInIssuer } from './application/identity/built-in-issuer.ts';
import {
  builtInTokenVerifier,
  oidcTokenVerifier,
  refuseEveryToken,
} from './application/identity/token-verifier.ts';
import { enqueueWebhookDeliveries } from './application/webhook-delivery/enqueue-deliveries.ts';
import type { ControlPlaneConfig } from './config.ts';
import type { RoleName } from './domain/role-names.ts';
import { ControlPlaneMetrics } from './roles/control-plane-metrics.ts';
import { LoopPulse } from './roles/loop-pulse.ts';
import { startProbeServer } from './roles/probe-server.ts';
import type { RoleContext, RunningRole } from './roles/role.ts';
import { ROLE_STARTERS } from './roles/role-starters.ts';

export interface StartControlPlaneOptions {
  readonly roles?: readonly RoleName[];
  /** An already open store (tests); closed with the control plane. */
  readonly store?: OpenStore;
  readonly log?: Logger;
  /** How recent a loop's pass must be for `/ready` and `/live` (tests shorten them). */
  readonly probeWindows?: ProbeWindows;
}

export interface RunningControlPlane {
  /** The API's address, when the api role runs. */
  readonly url: string | undefined;
  /** The API app, when the api role runs: tests send it requests in process (`inject`). */
  readonly api: ApiServer | undefined;
  /** The probe listener's address (`REPLIX_PROBE_PORT`), when it runs. */
  readonly probeUrl: string | undefined;
  readonly context: RoleContext;
  readonly store: OpenStore;
  close(): Promise<void>;
}

export function createControlPlaneLogger(level: string): Logger {
  return serviceLogger('replix-control-plane', level);
}

/**
 * Starts a control-plane process: opens and migrates the store, then runs the chosen roles
 * (all of them by default: API, reconciler, builder and health monitor).
 */
export async function startControlPlane(
  config: ControlPlaneConfig,
  options: StartControlPlaneOptions = {},
): Promise<RunningControlPlane> {
  const log = options.log ?? createControlPlaneLogger(config.logLevel);
  // Before the API is built: it traces requests only when tracing is on by then.
  const tracing = config.tracing ? await startTracing(config.tracing) : undefined;
  const store =
    options.store ??
    (await openStore({ databaseUrl: config.databaseUrl, dataDir: config.dataDir }));
  const closers: Array<() => Promise<void>> = [];
  const close = async () => {
    for (const closer of closers.reverse())
      await closer().catch((error) => log.warn({ err: error }, 'close failed'));
    await store.close();
    await tracing?.shutdown().catch((error) => log.warn({ err: error }, 'close failed'));
  };
  const roles = options.roles ?? ['api', 'reconciler', 'builder', 'health-monitor'];
  try {
    const issuer = config.oidc ? undefined : await BuiltInIssuer.open(config.dataDir);
    // Only the API verifies tokens: a background role starts even while the identity
    // provider cannot be reached (its discovery document is read at start).
    const verifyToken = config.oidc
      ? roles.includes('api')
        ? await oidcTokenVerifier(config.oidc)
        : refuseEveryToken
      : builtInTokenVerifier(issuer as BuiltInIssuer);
    const events = new PlatformEvents();
    // Every process that emits platform events records their webhook deliveries.
    events.subscribe(enqueueWebhookDeliveries);
    const metrics = new ControlPlaneMetrics(store.db);
    const metricsEndpoint = new MetricsEndpoint(metrics, config.metricsToken);
    const apiContext: ApiContext = {
      db: store.db,
      config,
      secrets: new SecretBox(config.secretKey),
      verifyToken,
      issuer,
      events,
      driver: await createDriver(config, log, store.db),
      log,
      metrics,
    };
    const context: RoleContext = {
      ...apiContext,
      processId: `${hostname()}:${process.pid}:${randomUUID().slice(0, 8)}`,
    };
    const probes = new ProcessProbes(store.db, options.probeWindows);
    let url: string | undefined;
    let api: ApiServer | undefined;
    for (const role of roles) {
      if (role === 'api') {
        const app = await buildApi(context);
        registerProbeRoutes(app, probes);
        registerMetricsRoutes(app, metrics, metricsEndpoint);
        if (issuer)
          app.get(
            '/.well-known/jwks.json',
            { config: { public: true }, schema: { hide: true } },
            () => issuer.jwks(),
          );
        url = await app.listen({ host: config.host, port: config.port });
        closers.push(() => app.close());
        api = app;
      } else {
        // Closers run last-first: the driver stops its instances after the reconciler stopped.
        // Only a process that runs instances stops them; an api-only one leaves them alone.
        // Their health becomes unknown, not unreachable: the next start raises no alarm.
        if (role === 'reconciler')
          closers.push(async () => markHealthUnknown(store.db, await context.driver.shutdown()));
        const starter = ROLE_STARTERS[role];
        const pulse = new LoopPulse(role, starter.loopPeriodMs(context));
        probes.watch(pulse);
        const running: RunningRole = await starter.start(context, pulse);
        closers.push(() => running.close());
      }
      closers.push(
        await startHeartbeat(store.db, {
          processId: `${context.processId}:${role}`,
          name: role,
          region: config.region,
        }),
      );
    }
    let probeUrl: string | undefined;
    if (config.probe) {
      const server = await startProbeServer(probes, config.probe, metricsEndpoint);
      closers.push(() => server.close());
      probeUrl = server.url;
    }
    return { url, api, probeUrl, context, store, close };
  } catch (error) {
    await close();
    throw error;
  }
}
