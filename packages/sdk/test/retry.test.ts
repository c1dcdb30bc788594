import { describe, expect, it } from 'vitest';
import { EtagCache } from '../src/etag-cache.ts';
import { DEFAULT_RETRY_POLICY, retryAfterMs, retryDelay, sleep } from '../src/retry.ts';

describe('retries', () => {
  it('read Retry-After as seconds or an HTTP date, and ignore anything else', () => {
    const now = Date.parse('2026-01-01T00:00:00Z');
    expect(retryAfterMs('5', now)).toBe(5000);
    expect(retryAfterMs(' 0 ', now)).toBe(0);
    expect(retryAfterMs('Thu, 01 Jan 2026 00:00:07 GMT', now)).toBe(7000);
    expect(retryAfterMs('Wed, 31 Dec 2025 00:00:00 GMT', now)).toBe(0);
    expect(retryAfterMs('-1', now)).toBeUndefined();
    expect(retryAfterMs('soon', now)).toBeUndefined();
    expect(retryAfterMs(null, now)).toBeUndefined();
  });

  it('wait what the server asks, else back off exponentially, and stop at the bound', () => {
    const policy = { retries: 3, baseDelayMs: 100, maxDelayMs: 300 };
    expect(retryDelay(policy, 0, 250)).toBe(250);
    expect(retryDelay(policy, 0, 301)).toBeUndefined();
    expect(retryDelay(policy, 0, undefined, () => 1)).toBe(100);
    expect(retryDelay(policy, 1, undefined, () => 0)).toBe(100);
    expect(retryDelay(policy, 2, undefined, () => 1)).toBe(300);
    expect(retryDelay(policy, 3, 0)).toBeUndefined();
    expect(retryDelay({ ...DEFAULT_RETRY_POLICY, retries: 0 }, 0, 0)).toBeUndefined();
  });

  it('end a wait when its signal aborts, with the signal reason', async () => {
    const controller = new AbortController();
    const waiting = sleep(60_000, controller.signal);
    controller.abort(new Error('stop'));
    await expect(waiting).rejects.toThrow('stop');
  });
});

describe('EtagCache', () => {
  it('keeps the most recently used answers within its count and size', () => {
    const cache = new EtagCache({ maxEntries: 2, maxChars: 400 });
    cache.set('a', '"1"', 'x'.repeat(10));
    cache.set('b', '"2"', 'x'.repeat(10));
    expect(cache.get('a')?.etag).toBe('"1"');
    cache.set('c', '"3"', 'x'.repeat(10));
    expect(cache.get('b')).toBeUndefined();
    expect(cache.get('a')?.etag).toBe('"1"');
    cache.set('big', '"4"', 'x'.repeat(101));
    expect(cache.get('big')).toBeUndefined();
    expect(cache.size).toBe(2);
  });
});
