import type { ApiContext } from '../api/context.ts';

export interface RunningRole {
  close(): Promise<void>;
}

/** Everything a role runs with: the API context plus this process's identity. */
export interface RoleContext extends ApiContext {
  /** Unique per process; owns leases and heartbeats. */
  readonly processId: string;
}
