import { ConfigError } from '@replix/runtime';
import { describe, expect, it } from 'vitest';
import { resolveInstanceConfig } from '../src/instance-config.ts';

const source = 'mysql://root@127.0.0.1:3306/shop';

describe('the rate limit (REPLIX_RATE_LIMIT, REPLIX_RATE_LIMIT_WINDOW)', () => {
  it('is off unless set, and off at 0', () => {
    expect(resolveInstanceConfig({ source }, {}).rateLimit).toBeUndefined();
    expect(resolveInstanceConfig({ source }, { REPLIX_RATE_LIMIT: '0' }).rateLimit).toBeUndefined();
  });

  it('takes requests per window, the window 1 s unless set', () => {
    expect(resolveInstanceConfig({ source }, { REPLIX_RATE_LIMIT: '100' }).rateLimit).toEqual({
      quota: 100,
      windowSeconds: 1,
    });
    expect(
      resolveInstanceConfig(
        { source },
        { REPLIX_RATE_LIMIT: '600', REPLIX_RATE_LIMIT_WINDOW: '60' },
      ).rateLimit,
    ).toEqual({ quota: 600, windowSeconds: 60 });
  });

  it.each([
    ['REPLIX_RATE_LIMIT', '-1', /REPLIX_RATE_LIMIT.*from 0 \(no limit\) to 1000000/],
    ['REPLIX_RATE_LIMIT', '1.5', /REPLIX_RATE_LIMIT.*whole number of requests/],
    ['REPLIX_RATE_LIMIT', 'lots', /REPLIX_RATE_LIMIT.*whole number of requests/],
    ['REPLIX_RATE_LIMIT_WINDOW', '0', /REPLIX_RATE_LIMIT_WINDOW.*from 1 to 3600/],
    ['REPLIX_RATE_LIMIT_WINDOW', '3601', /REPLIX_RATE_LIMIT_WINDOW.*from 1 to 3600/],
  ])('refuses %s=%j at start, naming the setting and its range', (name, value, message) => {
    const resolve = () =>
      resolveInstanceConfig({ source }, { REPLIX_RATE_LIMIT: '10', [name]: value });
    expect(resolve).toThrow(ConfigError);
    expect(resolve).toThrow(message);
  });
});
