import type { RoleContext, RoleName, RunningRole } from './role.ts';

/** How each background role starts; the api role is started by startControlPlane itself. */
export const ROLE_STARTERS: Record<
  Exclude<RoleName, 'api'>,
  (context: RoleContext) => Promise<RunningRole>
> = {
  reconciler: async () => ({ close: async () => {} }),
  builder: async () => ({ close: async () => {} }),
  'health-monitor': async () => ({ close: async () => {} }),
};
