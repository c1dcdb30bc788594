/**
 * What a build costs by the compute tier it ran on (docs/control-plane/builds.md, "Rates").
 * A build is billed by wall-clock minute at its tier's rate, rounded up to a whole cent, and
 * at least one cent.
 */
export const BUILD_RATES = {
  /** A builder role process on a control-plane machine (the `process` driver). */
  'process.small': { centsPerMinute: 1, vcpu: 1, memoryMb: 2048 },
} as const;

export type BuildComputeType = keyof typeof BUILD_RATES;

/** The tier a builder running beside the given driver uses: `process` is the only driver. */
export function computeTypeFor(_driverName: string): BuildComputeType {
  return 'process.small';
}

/** ceil(minutes × rate) in USD cents, at least 1. */
export function buildCostCents(computeType: BuildComputeType, durationMs: number): number {
  const minutes = Math.max(0, durationMs) / 60_000;
  return Math.max(1, Math.ceil(minutes * BUILD_RATES[computeType].centsPerMinute));
}
