import { describe, expect, it } from 'vitest';
import { rolloutBounds } from '../src/kubernetes/local-deployments.ts';

describe('rolloutBounds', () => {
  it('defaults to 25% each, surge rounded up and unavailable down', () => {
    expect(rolloutBounds({}, 1)).toEqual({ surge: 1, unavailable: 0 });
    expect(rolloutBounds({}, 8)).toEqual({ surge: 2, unavailable: 2 });
  });

  it('takes numbers and percentages', () => {
    const spec = (maxSurge: number | string, maxUnavailable: number | string) => ({
      strategy: { rollingUpdate: { maxSurge, maxUnavailable } },
    });
    expect(rolloutBounds(spec(1, 0), 3)).toEqual({ surge: 1, unavailable: 0 });
    expect(rolloutBounds(spec('50%', '50%'), 3)).toEqual({ surge: 2, unavailable: 1 });
  });

  it('surges by one when both are zero, which could never progress', () => {
    expect(
      rolloutBounds({ strategy: { rollingUpdate: { maxSurge: 0, maxUnavailable: 0 } } }, 2),
    ).toEqual({ surge: 1, unavailable: 0 });
  });
});
