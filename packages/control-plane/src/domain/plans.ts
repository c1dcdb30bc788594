/**
 * Instance sizes, smallest first: what each one gets and costs in compute units, and the
 * longest a query may run on it (`maxQueryMs` caps the schema config's `query.timeout_ms`).
 */
export const INSTANCE_SIZES = {
  xs: { taskCpu: 0.25, taskMemoryMb: 512, computeUnits: 1, maxQueryMs: 5_000 },
  s: { taskCpu: 0.5, taskMemoryMb: 1024, computeUnits: 2, maxQueryMs: 10_000 },
  m: { taskCpu: 1, taskMemoryMb: 2048, computeUnits: 4, maxQueryMs: 15_000 },
  l: { taskCpu: 2, taskMemoryMb: 4096, computeUnits: 8, maxQueryMs: 30_000 },
  xl: { taskCpu: 4, taskMemoryMb: 8192, computeUnits: 16, maxQueryMs: 60_000 },
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
  /**
   * The most read replicas a database may run. Each replica is a whole instance of the
   * database's size, so it counts its size's compute units again.
   */
  readonly maxReplicas: number;
  /** Seconds; the shortest poll-mode sync interval allowed. */
  readonly pollModeMinSyncInterval: number;
  readonly dataTransferGBPerMonth: number;
  /** Instances may run in any region, not only the default one (Teams and up). */
  readonly multiRegion: boolean;
  /**
   * The account may turn overage on (Teams and up): compute units beyond `computeUnits`, paid
   * for up to a monthly spending cap (docs/control-plane/billing.md).
   */
  readonly overageAllowed: boolean;
  /** The largest monthly spending cap for overage, in USD cents; 0 without overage. */
  readonly overageMaxCents: number;
  /**
   * Requests each API key may send to an instance's query routes per window, on each replica
   * (the instance's `REPLIX_RATE_LIMIT`, docs/limits.md "Rate limits"): a query key ships to
   * browsers, so one app or one leaked key must not take a whole instance.
   */
  readonly keyRateLimit: { readonly quota: number; readonly windowSeconds: number };
}

/** The numeric limits of each plan (spec §8 leaves the numbers to us; documented in the API docs). */
export const PLAN_LIMITS: Record<Plan, PlanLimits> = {
  free: {
    databases: 3,
    computeUnits: 2,
    maxInstanceSize: 's',
    maxReplicas: 1,
    pollModeMinSyncInterval: 60,
    dataTransferGBPerMonth: 5,
    multiRegion: false,
    overageAllowed: false,
    overageMaxCents: 0,
    keyRateLimit: { quota: 50, windowSeconds: 1 },
  },
  pro: {
    databases: 10,
    computeUnits: 8,
    maxInstanceSize: 'm',
    maxReplicas: 2,
    pollModeMinSyncInterval: 30,
    dataTransferGBPerMonth: 50,
    multiRegion: false,
    overageAllowed: false,
    overageMaxCents: 0,
    keyRateLimit: { quota: 200, windowSeconds: 1 },
  },
  teams: {
    databases: 25,
    computeUnits: 32,
    maxInstanceSize: 'l',
    maxReplicas: 3,
    pollModeMinSyncInterval: 10,
    dataTransferGBPerMonth: 250,
    multiRegion: true,
    overageAllowed: true,
    overageMaxCents: 50_000,
    keyRateLimit: { quota: 500, windowSeconds: 1 },
  },
  business: {
    databases: 100,
    computeUnits: 128,
    maxInstanceSize: 'xl',
    maxReplicas: 5,
    pollModeMinSyncInterval: 5,
    dataTransferGBPerMonth: 1000,
    multiRegion: true,
    overageAllowed: true,
    overageMaxCents: 500_000,
    keyRateLimit: { quota: 1_000, windowSeconds: 1 },
  },
  enterprise: {
    databases: 1000,
    computeUnits: 1024,
    maxInstanceSize: 'xl',
    maxReplicas: 10,
    pollModeMinSyncInterval: 1,
    dataTransferGBPerMonth: 5000,
    multiRegion: true,
    overageAllowed: true,
    overageMaxCents: 5_000_000,
    keyRateLimit: { quota: 5_000, windowSeconds: 1 },
  },
};

/**
 * A plan's limits with the control plane's own poll floor in place of the plan's
 * (`REPLIX_MIN_POLL_INTERVAL`, which `replix start` sets to 1): a local install has no plan
 * floor a developer would trip on.
 */
export function withPollFloor(limits: PlanLimits, minPollInterval: number | undefined): PlanLimits {
  return minPollInterval === undefined
    ? limits
    : { ...limits, pollModeMinSyncInterval: minPollInterval };
}

export function isPlan(plan: string): plan is Plan {
  return (PLANS as readonly string[]).includes(plan);
}

/** A stored plan name as a Plan; anything unknown is read as `free` (the least). */
export function asPlan(plan: string): Plan {
  return isPlan(plan) ? plan : 'free';
}

export function planLimits(plan: string): PlanLimits {
  return PLAN_LIMITS[asPlan(plan)];
}

/**
 * The plans a customer can buy with a checkout: `free` is a downgrade (cancel the subscription
 * in the billing portal) and `enterprise` is sales-led (an admin sets it).
 */
export const CHECKOUT_PLANS = ['pro', 'teams', 'business'] as const satisfies readonly Plan[];
export type CheckoutPlan = (typeof CHECKOUT_PLANS)[number];

/**
 * What a compute unit of overage costs a month, in USD cents: the spending cap buys
 * `floor(cap / price)` compute units above the plan's `computeUnits`.
 */
export const OVERAGE_CENTS_PER_COMPUTE_UNIT_MONTH = 1_000;

/** The compute units a spending cap pays for beyond the plan's own. */
export function overageComputeUnits(spendingCapCents: number): number {
  return Math.floor(spendingCapCents / OVERAGE_CENTS_PER_COMPUTE_UNIT_MONTH);
}

/** Compute units of an instance size; an unknown stored size counts as the largest. */
export function sizeComputeUnits(size: string): number {
  const known = (INSTANCE_SIZE_NAMES as readonly string[]).includes(size);
  return INSTANCE_SIZES[known ? (size as InstanceSize) : 'xl'].computeUnits;
}

/** The most replicas any plan allows (`terminate` drops the replication state of this many). */
export const MAX_REPLICAS = Math.max(...PLANS.map((plan) => PLAN_LIMITS[plan].maxReplicas));

/** True when `size` is no larger than `max`. */
export function sizeWithin(size: InstanceSize, max: InstanceSize): boolean {
  return INSTANCE_SIZE_NAMES.indexOf(size) <= INSTANCE_SIZE_NAMES.indexOf(max);
}
