/**
 * The retry and dead-letter rule of every job kind: an attempt that fails is tried again after
 * `delayMs(attemptsSoFar)`, until `maxAttempts` attempts have failed; then the job is dead, a
 * final `failed` state its owner records (and audits) instead of retrying.
 *
 * - builds: a build whose builder was lost (crashed, lease ran out) is retried at once, 3
 *   attempts in all (`builder/build-queue.ts`); a build that fails by itself is not retried.
 * - webhook deliveries: the Standard Webhooks schedule, 8 attempts (`webhooks/retry-schedule.ts`);
 *   a crash mid-attempt is not counted, the delivery is simply claimed again.
 * - drops of a source's replication state: 7 attempts over about 20 hours, then left for an
 *   operator, audited and notified (`reconciler/drop-replication-state.ts`).
 * - database goals: never dead; a step that fails unexpectedly is tried again after 5 s
 *   (`reconciler/leases.ts`).
 */
export interface RetryPolicy {
  readonly maxAttempts: number;
  /** The wait before the next attempt, given the attempts made so far. */
  delayMs(attemptsSoFar: number): number;
}

export type AfterFailure =
  | { readonly kind: 'retry'; readonly delayMs: number }
  | { readonly kind: 'dead' };

/**
 * What follows a failed attempt, given the attempts made so far (this one included).
 * `maxAttempts` overrides the policy's for a job granted more (a webhook retried by hand).
 */
export function afterFailedAttempt(
  policy: RetryPolicy,
  attemptsSoFar: number,
  maxAttempts = policy.maxAttempts,
): AfterFailure {
  return attemptsSoFar < maxAttempts
    ? { kind: 'retry', delayMs: policy.delayMs(attemptsSoFar) }
    : { kind: 'dead' };
}
