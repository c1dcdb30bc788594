/**
 * What a build costs by the compute tier it ran on (docs/control-plane/builds.md, "Rates").
 * A build is billed by wall-clock minute at its tier's rate, rounded up to a whole cent, and
 * at least one cent.
 */
export const BUILD_RATES = {
  /** A builder role process on a control-plane machine (the `process` driver). */
  'process.small': { centsPerMinute: 1, vcpu: 1, memoryMb: 2048 },
  /** A build Job's pod (the `kubernetes` driver; build-job-manifest.ts gives its resources). */
  'kubernetes.job': { centsPerMinute: 1, vcpu: 1, memoryMb: 1024 },
} as const;

export type BuildComputeType = keyof typeof BUILD_RATES;

/** The tier of the builds a builder runs beside the given driver: Jobs with `kubernetes`. */
export function computeTypeFor(driverName: string): BuildComputeType {
  return driverName === 'kubernetes' ? 'kubernetes.job' : 'process.small';
}

/** ceil(minutes × rate) in USD cents, at least 1. */
export function buildCostCents(computeType: BuildComputeType, durationMs: number): number {
  const minutes = Math.max(0, durationMs) / 60_000;
  return Math.max(1, Math.ceil(minutes * BUILD_RATES[computeType].centsPerMinute));
}
