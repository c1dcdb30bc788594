/**
 * Where instances can run (spec §1); config.ts checks `REPLIX_REGION` against this list. The
 * first region is the default.
 */
export const REGIONS = ['eu-west-1', 'us-east-1'] as const;
export type Region = (typeof REGIONS)[number];

export const DEFAULT_REGION: Region = REGIONS[0];
