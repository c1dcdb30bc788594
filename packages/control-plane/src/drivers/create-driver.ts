import type { Logger } from 'pino';
import type { ControlPlaneConfig } from '../config.ts';
import type { Driver } from './driver.ts';

/** The driver named by the configuration (placeholder until the process driver lands). */
export function createDriver(_config: ControlPlaneConfig, _log: Logger): Driver {
  const missing = () => Promise.reject(new Error('No instance driver yet.'));
  return {
    name: 'none',
    start: missing,
    stop: missing,
    isAlive: missing,
    updateKeys: missing,
    readLogs: missing,
    shutdown: async () => {},
  };
}
