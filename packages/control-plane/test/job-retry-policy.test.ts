import { describe, expect, it } from 'vitest';
import { afterFailedAttempt } from '../src/adapters/jobs/retry-policy.ts';
import { BUILD_RETRY } from '../src/adapters/store/build-queue.ts';
import { GOAL_RETRY } from '../src/adapters/store/goal-store.ts';
import {
  MAX_ATTEMPTS,
  webhookRetryPolicy,
} from '../src/application/webhook-delivery/retry-schedule.ts';

describe('job retry policies', () => {
  it('retries a webhook delivery on the schedule, then declares it dead', () => {
    const policy = webhookRetryPolicy();
    expect(afterFailedAttempt(policy, 1)).toEqual({ kind: 'retry', delayMs: 5000 });
    expect(afterFailedAttempt(policy, 2)).toEqual({ kind: 'retry', delayMs: 300_000 });
    expect(afterFailedAttempt(policy, MAX_ATTEMPTS - 1)).toEqual({
      kind: 'retry',
      delayMs: 36_000_000,
    });
    expect(afterFailedAttempt(policy, MAX_ATTEMPTS)).toEqual({ kind: 'dead' });
  });

  it('scales the webhook schedule and honours a delivery granted one more attempt', () => {
    expect(afterFailedAttempt(webhookRetryPolicy(0.2), 1)).toEqual({
      kind: 'retry',
      delayMs: 1000,
    });
    expect(afterFailedAttempt(webhookRetryPolicy(), MAX_ATTEMPTS, MAX_ATTEMPTS + 1)).toEqual({
      kind: 'retry',
      delayMs: 36_000_000,
    });
    expect(afterFailedAttempt(webhookRetryPolicy(), MAX_ATTEMPTS + 1, MAX_ATTEMPTS + 1)).toEqual({
      kind: 'dead',
    });
  });

  it('retries a lost build at once, three attempts in all', () => {
    expect(afterFailedAttempt(BUILD_RETRY, 1)).toEqual({ kind: 'retry', delayMs: 0 });
    expect(afterFailedAttempt(BUILD_RETRY, 2)).toEqual({ kind: 'retry', delayMs: 0 });
    expect(afterFailedAttempt(BUILD_RETRY, 3)).toEqual({ kind: 'dead' });
  });

  it('never declares a goal dead', () => {
    expect(afterFailedAttempt(GOAL_RETRY, 1_000_000)).toEqual({ kind: 'retry', delayMs: 5000 });
  });
});
