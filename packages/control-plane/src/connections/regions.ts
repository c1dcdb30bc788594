import { REGIONS, type Region } from '../config.ts';

/**
 * Where instances can run (spec §1). The list is config.ts's, which checks `REPLIX_REGION`
 * against it; the first region is the default.
 */
export { REGIONS, type Region };

export const DEFAULT_REGION: Region = REGIONS[0];
