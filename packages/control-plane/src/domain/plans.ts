/** Instance sizes, smallest first: what each one gets and costs in compute units. */
export const INSTANCE_SIZES = {
  xs: { taskCpu: 0.25, taskMemoryMb: 512, computeUnits: 1 },
  s: { taskCpu: 0.5, taskMemoryMb: 1024, computeUnits: 2 },
  m: { taskCpu: 1, taskMemoryMb: 2048, computeUnits: 4 },
  l: { taskCpu: 2, taskMemoryMb: 4096, computeUnits: 8 },
  xl: { taskCpu: 4, taskMemoryMb: 8192, computeUnits: 16 },
} as const;

export type InstanceSize = keyof typeof INSTANCE_SIZES;
export const INSTANCE_SIZE_NAMES = Object.keys(INSTANCE_SIZES) as InstanceSize[];

export const PLANS = ['free', 'pro', 'teams', 'business', 'enterprise'] as const;
export type Plan = (typeof PLANS)[number];

export interface PlanLimits {
  readonly databases: number;
  /** Sum of the compute units of the account's running instances. */
  readonly computeUnits: number;
  readonly maxInstanceSize: InstanceSize;
  /** Seconds; the shortest poll-mode sync interval allowed. */
  readonly pollModeMinSyncInterval: number;
  readonly dataTransferGBPerMonth: number;
  readonly multiRegion: boolean;
}

/** The numeric limits of each plan (spec §8 leaves the numbers to us; documented in the API docs). */
export const PLAN_LIMITS: Record<Plan, PlanLimits> = {
  free: {
    databases: 3,
    computeUnits: 2,
    maxInstanceSize: 's',
    pollModeMinSyncInterval: 60,
    dataTransferGBPerMonth: 5,
    multiRegion: false,
  },
  pro: {
    databases: 10,
    computeUnits: 8,
    maxInstanceSize: 'm',
    pollModeMinSyncInterval: 30,
    dataTransferGBPerMonth: 50,
    multiRegion: false,
  },
  teams: {
    databases: 25,
    computeUnits: 32,
    maxInstanceSize: 'l',
    pollModeMinSyncInterval: 10,
    dataTransferGBPerMonth: 250,
    multiRegion: true,
  },
  business: {
    databases: 100,
    computeUnits: 128,
    maxInstanceSize: 'xl',
    pollModeMinSyncInterval: 5,
    dataTransferGBPerMonth: 1000,
    multiRegion: true,
  },
  enterprise: {
    databases: 1000,
    computeUnits: 1024,
    maxInstanceSize: 'xl',
    pollModeMinSyncInterval: 1,
    dataTransferGBPerMonth: 5000,
    multiRegion: true,
  },
};

export function planLimits(plan: string): PlanLimits {
  return PLAN_LIMITS[(PLANS as readonly string[]).includes(plan) ? (plan as Plan) : 'free'];
}

/** True when `size` is no larger than `max`. */
export function sizeWithin(size: InstanceSize, max: InstanceSize): boolean {
  return INSTANCE_SIZE_NAMES.indexOf(size) <= INSTANCE_SIZE_NAMES.indexOf(max);
}
