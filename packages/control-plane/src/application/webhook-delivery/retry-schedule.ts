import type { RetryPolicy } from '../../adapters/jobs/retry-policy.ts';

const SECOND = 1000;
const MINUTE = 60 * SECOND;
const HOUR = 60 * MINUTE;

/**
 * The wait before each attempt of a delivery, after the previous one failed (the first is sent
 * at once). The Standard Webhooks schedule: 8 attempts over about 27.5 hours, after which the
 * delivery is `failed`.
 */
export const RETRY_SCHEDULE_MS: readonly number[] = [
  0,
  5 * SECOND,
  5 * MINUTE,
  30 * MINUTE,
  2 * HOUR,
  5 * HOUR,
  10 * HOUR,
  10 * HOUR,
];

/** Attempts of an event delivery before it is `failed`. */
export const MAX_ATTEMPTS = RETRY_SCHEDULE_MS.length;

/**
 * The wait before attempt `attempt + 1`, given `attempt` attempts so far, scaled by
 * REPLIX_WEBHOOK_RETRY_SCALE (tests). Beyond the schedule (a retry asked for by hand) the
 * last step applies.
 */
export function retryDelayMs(attemptsSoFar: number, scale = 1): number {
  const step =
    RETRY_SCHEDULE_MS[Math.min(attemptsSoFar, RETRY_SCHEDULE_MS.length - 1)] ??
    RETRY_SCHEDULE_MS[0] ??
    0;
  return Math.round(step * scale);
}

/** The deliveries' retry policy: the schedule above, scaled. */
export function webhookRetryPolicy(scale = 1): RetryPolicy {
  return {
    maxAttempts: MAX_ATTEMPTS,
    delayMs: (attemptsSoFar) => retryDelayMs(attemptsSoFar, scale),
  };
}
