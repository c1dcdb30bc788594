import type { Logger } from 'pino';
import { type ControlPlaneConfig, ControlPlaneConfigError } from '../config.ts';
import type { Driver } from './driver.ts';
import { ProcessDriver } from './process-driver.ts';

/** The driver named by the configuration (`REPLIX_DRIVER`, default `process`). */
export function createDriver(config: ControlPlaneConfig, log: Logger): Driver {
  const name = config.driver ?? 'process';
  if (name === 'process') return new ProcessDriver({ dataDir: config.dataDir, log });
  if (name === 'kubernetes') {
    throw new ControlPlaneConfigError(
      'REPLIX_DRIVER=kubernetes is not available yet; use the process driver (unset REPLIX_DRIVER).',
    );
  }
  throw new ControlPlaneConfigError(`REPLIX_DRIVER must be "process", not "${name}".`);
}
