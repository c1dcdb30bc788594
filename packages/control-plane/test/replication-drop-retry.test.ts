import { describe, expect, it } from 'vitest';
import { afterFailedAttempt } from '../src/adapters/jobs/retry-policy.ts';
import { dropRetryPolicy } from '../src/application/reconciler/drop-replication-state.ts';

describe("the retry policy of dropping a source's replication state", () => {
  it('tries 7 times over about 20 hours, then leaves it for an operator', () => {
    const policy = dropRetryPolicy();
    const outcomes = Array.from({ length: 7 }, (_, n) => afterFailedAttempt(policy, n + 1));
    expect(
      outcomes.map((outcome) => (outcome.kind === 'retry' ? outcome.delayMs : 'dead')),
    ).toEqual([60e3, 300e3, 1800e3, 7200e3, 21600e3, 43200e3, 'dead']);
    const hours =
      outcomes.reduce((sum, outcome) => sum + (outcome.kind === 'retry' ? outcome.delayMs : 0), 0) /
      3600e3;
    expect(hours).toBeGreaterThan(18);
    expect(hours).toBeLessThan(24);
  });

  it('scales its waits for tests', () => {
    expect(dropRetryPolicy(0.001).delayMs(1)).toBe(60);
    expect(dropRetryPolicy(0.001).delayMs(6)).toBe(43200);
  });
});
