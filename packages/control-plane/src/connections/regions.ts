import type { PlanLimits } from '../domain/plans.ts';
import { ApiError } from '../errors.ts';

/** Where instances can run (spec §1); the first is the default. */
export const REGIONS = ['eu-west-1', 'us-east-1'] as const;
export type Region = (typeof REGIONS)[number];
export const DEFAULT_REGION: Region = 'eu-west-1';

/** Any region but the default needs a plan with multi-region placement (Teams and up). */
export function assertRegionAllowed(region: string, limits: PlanLimits, plan: string): void {
  if (region !== DEFAULT_REGION && !limits.multiRegion) {
    throw new ApiError(
      'plan_limit',
      `Region ${region} needs a plan with multi-region placement (Teams or above); the ${plan} plan has ${DEFAULT_REGION} only.`,
    );
  }
}
