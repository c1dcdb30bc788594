import { ApiError } from './errors.ts';
import type { Goal } from './goal.ts';
import {
  type InstanceSize,
  overageComputeUnits,
  type PlanLimits,
  planLimits,
  sizeComputeUnits,
  sizeWithin,
} from './plans.ts';
import { DEFAULT_REGION } from './regions.ts';

/**
 * Every plan limit, in one place: a pure rule per limit that returns why a request breaks it
 * (or undefined), and an `assert…` that throws the API error for it. The routes call the
 * asserts; docs/control-plane/billing.md lists the rules; test/plans.test.ts runs them as a table.
 */

/** What a rule needs to know about the account: its plan name and that plan's limits. */
export interface PlanOf {
  readonly plan: string;
  readonly limits: PlanLimits;
}

export function planOf(plan: string): PlanOf {
  return { plan, limits: planLimits(plan) };
}

/** Creating one more database when the account has `count` (not deleted). */
export function databaseCountViolation(
  { plan, limits }: PlanOf,
  count: number,
): string | undefined {
  return count >= limits.databases
    ? `The ${plan} plan allows ${limits.databases} databases; delete one or upgrade.`
    : undefined;
}

export function instanceSizeViolation(
  { plan, limits }: PlanOf,
  size: InstanceSize,
): string | undefined {
  return sizeWithin(size, limits.maxInstanceSize)
    ? undefined
    : `Instance size ${size} is above the ${plan} plan's largest, ${limits.maxInstanceSize}; upgrade to use it.`;
}

export function replicasViolation({ plan, limits }: PlanOf, replicas: number): string | undefined {
  return replicas <= limits.maxReplicas
    ? undefined
    : `${replicas} replicas are above the ${plan} plan's most, ${limits.maxReplicas}; upgrade to use them.`;
}

/** Any region but the default needs multi-region placement (Teams and up). */
export function regionViolation({ plan, limits }: PlanOf, region: string): string | undefined {
  return region !== DEFAULT_REGION && !limits.multiRegion
    ? `Region ${region} needs a plan with multi-region placement (Teams or above); the ${plan} plan has ${DEFAULT_REGION} only.`
    : undefined;
}

/** Poll mode re-reads the source, so the plan sets the shortest interval allowed. */
export function pollIntervalViolation(
  { plan, limits }: PlanOf,
  syncMode: string,
  syncInterval: number,
): string | undefined {
  return syncMode === 'poll' && syncInterval < limits.pollModeMinSyncInterval
    ? `body.syncInterval must be at least ${limits.pollModeMinSyncInterval} seconds in poll mode on the ${plan} plan.`
    : undefined;
}

/** A schema config's own `sync.interval` below the plan's poll floor (create without syncInterval). */
export function configPollIntervalViolation(
  { plan, limits }: PlanOf,
  configInterval: number | undefined,
): string | undefined {
  const floor = limits.pollModeMinSyncInterval;
  return configInterval !== undefined && configInterval < floor
    ? `body.schemaConfig.sync.interval is ${configInterval} seconds, but poll mode on the ${plan} plan syncs at most every ${floor} seconds: give ${floor} or more (in the config or as syncInterval), or use CDC.`
    : undefined;
}

/** The account's overage setting, as far as the compute-unit rule cares. */
export interface OverageState {
  readonly enabled: boolean;
  readonly spendingCapCents: number | null;
}

/** The compute units the account may run: the plan's, plus what an overage cap pays for. */
export function computeUnitsAllowed({ limits }: PlanOf, overage: OverageState): number {
  const extra =
    limits.overageAllowed && overage.enabled && overage.spendingCapCents
      ? overageComputeUnits(Math.min(overage.spendingCapCents, limits.overageMaxCents))
      : 0;
  return limits.computeUnits + extra;
}

/**
 * Starting (or growing) an instance of `requested` compute units while the account's other
 * instances use `inUse`.
 */
export function computeUnitsViolation(
  plan: PlanOf,
  overage: OverageState,
  inUse: number,
  requested: number,
): string | undefined {
  const allowed = computeUnitsAllowed(plan, overage);
  if (inUse + requested <= allowed) return undefined;
  const own = plan.limits.computeUnits;
  const withOverage = allowed > own ? ` (${allowed} with your overage cap)` : '';
  const hint = plan.limits.overageAllowed
    ? 'stop an instance, raise your overage spending cap, or upgrade'
    : 'stop an instance or upgrade';
  return `This needs ${requested} compute units and your instances use ${inUse}; the ${plan.plan} plan allows ${own}${withOverage}. To go on, ${hint}.`;
}

function fail(code: 'plan_limit' | 'validation_failed', message: string | undefined): void {
  if (message) throw new ApiError(code, message);
}

export const assertDatabaseCount = (plan: PlanOf, count: number): void =>
  fail('plan_limit', databaseCountViolation(plan, count));
export const assertInstanceSize = (plan: PlanOf, size: InstanceSize): void =>
  fail('plan_limit', instanceSizeViolation(plan, size));
export const assertReplicas = (plan: PlanOf, replicas: number): void =>
  fail('plan_limit', replicasViolation(plan, replicas));
export const assertRegion = (plan: PlanOf, region: string): void =>
  fail('plan_limit', regionViolation(plan, region));
/** A poll interval below the plan's minimum is a bad value for this account: 400, as before. */
export const assertPollInterval = (plan: PlanOf, syncMode: string, syncInterval: number): void =>
  fail('validation_failed', pollIntervalViolation(plan, syncMode, syncInterval));
export const assertConfigPollInterval = (plan: PlanOf, configInterval: number | undefined): void =>
  fail('validation_failed', configPollIntervalViolation(plan, configInterval));

/**
 * Statuses whose instance runs or is about to: a building database is being provisioned or
 * rebuilt, a deploying one started. Paused, stopping and stopped ones use nothing.
 */
export const COMPUTE_STATUSES = ['building', 'deploying', 'running'] as const;

/** The compute units of `replicas` replicas of `size`: each replica is a whole instance. */
export function replicatedComputeUnits(size: string, replicas: number): number {
  return sizeComputeUnits(size) * Math.max(1, replicas);
}

/**
 * The compute units a database's instance takes (its size's, once per replica), counting a
 * pending resize's new size and replica count.
 */
export function databaseComputeUnits(row: {
  instance_size: string;
  replicas: number;
  goal: Goal | null;
}): number {
  const goal = row.goal?.action === 'resize' ? row.goal : undefined;
  const pending = goal?.instanceSize || goal?.replicas ? goal : undefined;
  return Math.max(
    replicatedComputeUnits(row.instance_size, row.replicas),
    pending
      ? replicatedComputeUnits(
          pending.instanceSize ?? row.instance_size,
          pending.replicas ?? row.replicas,
        )
      : 0,
  );
}
