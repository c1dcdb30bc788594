import { readFileSync } from 'node:fs';
import { describe, expect, it } from 'vitest';
import {
  computeUnitsAllowed,
  computeUnitsViolation,
  databaseComputeUnits,
  databaseCountViolation,
  instanceSizeViolation,
  planOf,
  pollIntervalViolation,
  regionViolation,
  replicasViolation,
} from '../src/domain/plan-enforcement.ts';
import {
  asPlan,
  CHECKOUT_PLANS,
  INSTANCE_SIZES,
  MAX_REPLICAS,
  OVERAGE_CENTS_PER_COMPUTE_UNIT_MONTH,
  overageComputeUnits,
  PLAN_LIMITS,
  PLANS,
  planLimits,
  sizeComputeUnits,
} from '../src/domain/plans.ts';

const NO_OVERAGE = { enabled: false, spendingCapCents: null };

describe('the plan table', () => {
  it('has exactly the five plans of spec §1, with every limit', () => {
    expect(Object.keys(PLAN_LIMITS)).toEqual([...PLANS]);
    expect(PLANS).toEqual(['free', 'pro', 'teams', 'business', 'enterprise']);
  });

  it.each([
    // plan, databases, computeUnits, maxInstanceSize, maxReplicas, pollMin, transfer, multiRegion, overage, overageMax, key requests/s
    ['free', 3, 2, 's', 1, 60, 5, false, false, 0, 50],
    ['pro', 10, 8, 'm', 2, 30, 50, false, false, 0, 200],
    ['teams', 25, 32, 'l', 3, 10, 250, true, true, 50_000, 500],
    ['business', 100, 128, 'xl', 5, 5, 1000, true, true, 500_000, 1_000],
    ['enterprise', 1000, 1024, 'xl', 10, 1, 5000, true, true, 5_000_000, 5_000],
  ] as const)(
    '%s',
    (plan, databases, computeUnits, maxSize, replicas, pollMin, transfer, multi, overage, max, perSecond) => {
      expect(PLAN_LIMITS[plan]).toEqual({
        databases,
        computeUnits,
        maxInstanceSize: maxSize,
        maxReplicas: replicas,
        pollModeMinSyncInterval: pollMin,
        dataTransferGBPerMonth: transfer,
        multiRegion: multi,
        overageAllowed: overage,
        overageMaxCents: max,
        keyRateLimit: { quota: perSecond, windowSeconds: 1 },
      });
    },
  );

  it('grows with every step up: no plan allows less than the one below it', () => {
    for (const [lower, higher] of PLANS.slice(0, -1).map((plan, i) => [plan, PLANS[i + 1]])) {
      const a = PLAN_LIMITS[lower as (typeof PLANS)[number]];
      const b = PLAN_LIMITS[higher as (typeof PLANS)[number]];
      expect(b.databases).toBeGreaterThan(a.databases);
      expect(b.computeUnits).toBeGreaterThan(a.computeUnits);
      expect(b.pollModeMinSyncInterval).toBeLessThan(a.pollModeMinSyncInterval);
      expect(b.dataTransferGBPerMonth).toBeGreaterThan(a.dataTransferGBPerMonth);
      expect(sizeComputeUnits(b.maxInstanceSize)).toBeGreaterThanOrEqual(
        sizeComputeUnits(a.maxInstanceSize),
      );
      expect(b.overageMaxCents).toBeGreaterThanOrEqual(a.overageMaxCents);
      expect(b.maxReplicas).toBeGreaterThanOrEqual(a.maxReplicas);
      expect(b.keyRateLimit.quota / b.keyRateLimit.windowSeconds).toBeGreaterThan(
        a.keyRateLimit.quota / a.keyRateLimit.windowSeconds,
      );
    }
  });

  it('gives multi-region and overage from Teams up, and sells pro, teams and business', () => {
    expect(PLANS.filter((plan) => PLAN_LIMITS[plan].multiRegion)).toEqual([
      'teams',
      'business',
      'enterprise',
    ]);
    expect(PLANS.filter((plan) => PLAN_LIMITS[plan].overageAllowed)).toEqual([
      'teams',
      'business',
      'enterprise',
    ]);
    expect(CHECKOUT_PLANS).toEqual(['pro', 'teams', 'business']);
  });

  it('reads an unknown stored plan as free, and an unknown size as the largest', () => {
    expect(asPlan('platinum')).toBe('free');
    expect(planLimits('platinum')).toBe(PLAN_LIMITS.free);
    expect(sizeComputeUnits('xxl')).toBe(INSTANCE_SIZES.xl.computeUnits);
    expect(INSTANCE_SIZES.m.computeUnits).toBe(4);
  });

  it('converts a spending cap to whole compute units of overage', () => {
    expect(OVERAGE_CENTS_PER_COMPUTE_UNIT_MONTH).toBe(1000);
    expect(overageComputeUnits(999)).toBe(0);
    expect(overageComputeUnits(1000)).toBe(1);
    expect(overageComputeUnits(50_000)).toBe(50);
  });
});

describe('plan enforcement', () => {
  it.each([
    ['free', 2, true],
    ['free', 3, false],
    ['pro', 9, true],
    ['pro', 10, false],
    ['enterprise', 999, true],
  ] as const)('databases: %s with %i may create one more: %s', (plan, count, allowed) => {
    const message = databaseCountViolation(planOf(plan), count);
    expect(message === undefined).toBe(allowed);
    if (message)
      expect(message).toMatch(/^The \w+ plan allows \d+ databases; delete one or upgrade\.$/);
  });

  it.each([
    ['free', 's', true],
    ['free', 'm', false],
    ['pro', 'm', true],
    ['pro', 'l', false],
    ['teams', 'l', true],
    ['teams', 'xl', false],
    ['business', 'xl', true],
  ] as const)('instance size: %s may use %s: %s', (plan, size, allowed) => {
    const message = instanceSizeViolation(planOf(plan), size);
    expect(message === undefined).toBe(allowed);
    if (message) expect(message).toContain(`above the ${plan} plan's largest`);
  });

  it.each([
    ['free', 'eu-west-1', true],
    ['free', 'us-east-1', false],
    ['pro', 'us-east-1', false],
    ['teams', 'us-east-1', true],
    ['enterprise', 'us-east-1', true],
  ] as const)('region: %s may use %s: %s', (plan, region, allowed) => {
    const message = regionViolation(planOf(plan), region);
    expect(message === undefined).toBe(allowed);
    if (message) expect(message).toContain('multi-region placement (Teams or above)');
  });

  it.each([
    ['free', 'poll', 60, true],
    ['free', 'poll', 59, false],
    ['free', 'cdc', 1, true],
    ['pro', 'poll', 29, false],
    ['teams', 'poll', 10, true],
    ['enterprise', 'poll', 1, true],
  ] as const)('poll interval: %s %s every %is: %s', (plan, mode, interval, allowed) => {
    const message = pollIntervalViolation(planOf(plan), mode, interval);
    expect(message === undefined).toBe(allowed);
    if (message) expect(message).toMatch(/^body\.syncInterval must be at least \d+ seconds/);
  });

  it.each([
    // plan, in use, requested, overage cap (null: off), allowed
    ['free', 0, 2, null, true],
    ['free', 1, 2, null, false],
    ['pro', 4, 4, null, true],
    ['pro', 6, 4, null, false],
    ['pro', 6, 4, 50_000, false], // pro has no overage: the cap is ignored
    ['teams', 30, 4, null, false],
    ['teams', 30, 4, 2_000, true], // 2 compute units of overage
    ['teams', 30, 4, 1_999, false],
    ['teams', 30, 100, 10_000_000, false], // capped at the tier maximum (50 units)
    ['teams', 30, 52, 10_000_000, true],
  ] as const)(
    'compute units: %s using %i, starting %i, overage %s: %s',
    (plan, inUse, requested, cap, allowed) => {
      const overage = cap === null ? NO_OVERAGE : { enabled: true, spendingCapCents: cap };
      const message = computeUnitsViolation(planOf(plan), overage, inUse, requested);
      expect(message === undefined).toBe(allowed);
      if (message) {
        expect(message).toContain(
          `This needs ${requested} compute units and your instances use ${inUse}`,
        );
      }
    },
  );

  it('counts overage only when it is enabled', () => {
    expect(computeUnitsAllowed(planOf('teams'), { enabled: false, spendingCapCents: 5000 })).toBe(
      32,
    );
    expect(computeUnitsAllowed(planOf('teams'), { enabled: true, spendingCapCents: 5000 })).toBe(
      37,
    );
  });

  it('counts a database at its larger size while a resize is pending', () => {
    expect(databaseComputeUnits({ instance_size: 's', replicas: 1, goal: null })).toBe(2);
    expect(
      databaseComputeUnits({
        instance_size: 's',
        replicas: 1,
        goal: { action: 'resize', fromStatus: 'running', requestedAt: '', instanceSize: 'l' },
      }),
    ).toBe(8);
  });

  it("counts each replica at its size's compute units, and a pending replica change", () => {
    expect(databaseComputeUnits({ instance_size: 's', replicas: 3, goal: null })).toBe(6);
    expect(
      databaseComputeUnits({
        instance_size: 's',
        replicas: 1,
        goal: { action: 'resize', fromStatus: 'running', requestedAt: '', replicas: 2 },
      }),
    ).toBe(4);
    // Fewer replicas pending: the current ones count until the deploy finishes.
    expect(
      databaseComputeUnits({
        instance_size: 'm',
        replicas: 2,
        goal: { action: 'resize', fromStatus: 'running', requestedAt: '', replicas: 1 },
      }),
    ).toBe(8);
  });

  it('allows replicas up to the plan maximum: 1 on free, more on paid plans', () => {
    expect(replicasViolation(planOf('free'), 1)).toBeUndefined();
    expect(replicasViolation(planOf('free'), 2)).toBe(
      "2 replicas are above the free plan's most, 1; upgrade to use them.",
    );
    expect(replicasViolation(planOf('pro'), 2)).toBeUndefined();
    expect(replicasViolation(planOf('business'), 5)).toBeUndefined();
    expect(replicasViolation(planOf('business'), 6)).toBeDefined();
    expect(MAX_REPLICAS).toBe(10);
  });
});

describe('docs/limits.md on read replicas', () => {
  it('gives every plan its maxReplicas', () => {
    const doc = readFileSync(new URL('../../../docs/limits.md', import.meta.url), 'utf8');
    const row = doc.split('\n').find((line) => line.startsWith('| Read replicas per database'));
    expect(row).toBeDefined();
    const listed = PLANS.map((plan) => `${plan} ${PLAN_LIMITS[plan].maxReplicas}`).join(', ');
    expect(row).toMatch(new RegExp(`\\| ${listed} \\|$`));
  });
});

describe('docs/limits.md on rate limits', () => {
  it('gives every plan its key rate limit', () => {
    const doc = readFileSync(new URL('../../../docs/limits.md', import.meta.url), 'utf8');
    const row = doc.split('\n').find((line) => line.startsWith('| Requests per key per window'));
    expect(row).toBeDefined();
    const listed = PLANS.map((plan) => {
      const { quota, windowSeconds } = PLAN_LIMITS[plan].keyRateLimit;
      return `${plan} ${quota.toLocaleString('en-US')}/${windowSeconds} s`;
    }).join(', ');
    expect(row).toContain(`the plan: ${listed};`);
  });
});
