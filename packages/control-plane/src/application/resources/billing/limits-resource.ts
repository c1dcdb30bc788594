import type { PlanLimits } from '../../../domain/plans.ts';

/** A plan's limits as the API shows them (`PlanLimits` in billing-schemas.ts). */
export function limitsResource(limits: PlanLimits) {
  return {
    databases: limits.databases,
    computeUnits: limits.computeUnits,
    maxInstanceSize: limits.maxInstanceSize,
    pollModeMinSyncInterval: limits.pollModeMinSyncInterval,
    dataTransferGBPerMonth: limits.dataTransferGBPerMonth,
    multiRegion: limits.multiRegion,
    overageAllowed: limits.overageAllowed,
    overageMaxCents: limits.overageMaxCents,
    maxReplicas: limits.maxReplicas,
  };
}
