/** Where instances can run (spec §1); the first is the default. */
export const REGIONS = ['eu-west-1', 'us-east-1'] as const;
export type Region = (typeof REGIONS)[number];
export const DEFAULT_REGION: Region = 'eu-west-1';
