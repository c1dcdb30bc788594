/** The parts a control-plane process can run; `replix start` runs them all in one process. */
export const ROLE_NAMES = ['api', 'reconciler', 'builder', 'health-monitor'] as const;

export type RoleName = (typeof ROLE_NAMES)[number];
