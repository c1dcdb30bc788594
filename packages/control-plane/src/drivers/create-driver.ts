import type { Logger } from 'pino';
import type { ControlPlaneConfig } from '../config.ts';
import type { Driver } from './driver.ts';
import { ProcessDriver } from './process-driver.ts';

/** The driver named by the configuration (`REPLIX_DRIVER`, checked when it was decoded). */
export function createDriver(config: ControlPlaneConfig, log: Logger): Driver {
  switch (config.driver) {
    case 'process':
      return new ProcessDriver({ dataDir: config.dataDir, log });
  }
}
