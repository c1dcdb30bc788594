import type { ApiContext } from '../api/context.ts';

/** The parts a control-plane process can run; `replix start` runs them all in one process. */
export const ROLE_NAMES = ['api', 'reconciler', 'builder', 'health-monitor'] as const;
export type RoleName = (typeof ROLE_NAMES)[number];

export interface RunningRole {
  close(): Promise<void>;
}

/** Everything a role runs with: the API context plus this process's identity. */
export interface RoleContext extends ApiContext {
  /** Unique per process; owns leases and heartbeats. */
  readonly processId: string;
}
