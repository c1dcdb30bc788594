/**
 * `@replix/control-plane/router`: what `replix router` runs, the process driver's endpoint
 * router as a process of its own (`router-process.ts`). It imports the router and the runtime
 * only, never the control plane's store or API, so it starts fast and small.
 */
import process from 'node:process';
import { decodeEnvironment, TRACING_VARIABLE_SCHEMAS, tracingSettingsFrom } from '@replix/runtime';
import { serviceLogger } from '@replix/runtime/logger';
import { startTracing } from '@replix/runtime/tracing';
import { Type } from 'typebox';
import { HAND_OVER_SIGNAL, startRouter } from './router-process.ts';

export const ROUTER_SERVICE_NAME = 'replix-router';

export interface RouterProgramOptions {
  readonly dir: string;
  readonly takeOver: boolean;
  readonly logLevel: string;
}

/** Runs the router until SIGTERM or SIGINT (or its folder is removed), then exits 0. */
export async function runRouterProgram(options: RouterProgramOptions): Promise<void> {
  const log = serviceLogger(ROUTER_SERVICE_NAME, options.logLevel);
  // The same OTEL_* variables as every process; the driver passes the control plane's on.
  const tracingSettings = tracingSettingsFrom(
    decodeEnvironment(Type.Object(TRACING_VARIABLE_SCHEMAS), process.env),
    ROUTER_SERVICE_NAME,
  );
  const tracing = tracingSettings ? await startTracing(tracingSettings) : undefined;
  const running = await startRouter({ dir: options.dir, log, takeOver: options.takeOver });
  const stop = () => void running.stop();
  process.once('SIGTERM', stop);
  process.once('SIGINT', stop);
  // A router that took the ports over (`--take-over`) asks this one to hand them over.
  process.once(HAND_OVER_SIGNAL, () => void running.stop({ handOver: true }));
  await running.stopped;
  await tracing?.shutdown().catch(() => {});
  log.info('router stopped');
  log.flush?.();
}
