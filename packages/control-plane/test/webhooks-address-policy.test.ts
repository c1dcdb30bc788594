import { describe, expect, it } from 'vitest';
import { blockedAddressReason } from '../src/webhooks/address-policy.ts';
import { retryDelayMs } from '../src/webhooks/retry-schedule.ts';

describe('the webhook address policy', () => {
  it.each([
    ['127.0.0.1', 'loopback'],
    ['127.255.0.9', 'loopback'],
    ['::1', 'loopback'],
    ['10.0.0.1', 'private'],
    ['172.16.0.1', 'private'],
    ['172.31.255.254', 'private'],
    ['192.168.1.1', 'private'],
    ['fc00::1', 'private'],
    ['fd12:3456::1', 'private'],
    ['169.254.169.254', 'link-local'],
    ['169.254.0.1', 'link-local'],
    ['fe80::1', 'link-local'],
    ['100.64.0.1', 'shared (CGNAT)'],
    ['100.127.255.254', 'shared (CGNAT)'],
    ['0.0.0.0', 'unspecified'],
    ['0.1.2.3', 'unspecified'],
    ['::', 'unspecified'],
    ['224.0.0.1', 'multicast'],
    ['239.255.255.250', 'multicast'],
    ['ff02::1', 'multicast'],
    ['255.255.255.255', 'reserved'],
    ['::ffff:127.0.0.1', 'loopback'],
    ['::ffff:7f00:1', 'loopback'],
    ['::ffff:10.0.0.1', 'private'],
    ['::ffff:a9fe:a9fe', 'link-local'],
    ['::ffff:100.64.0.1', 'shared (CGNAT)'],
    ['64:ff9b::a9fe:a9fe', 'link-local'],
  ])('refuses %s (%s)', (address, reason) => {
    expect(blockedAddressReason(address, false)).toBe(reason);
  });

  it.each([
    '8.8.8.8',
    '93.184.215.14',
    '172.32.0.1',
    '100.128.0.1',
    '2606:4700:4700::1111',
    '::ffff:8.8.8.8',
  ])('allows the public address %s', (address) => {
    expect(blockedAddressReason(address, false)).toBeUndefined();
  });

  it('lets loopback and private through in development, never link-local or CGNAT', () => {
    for (const address of ['127.0.0.1', '::1', '10.1.1.1', '192.168.0.2', 'fd00::1']) {
      expect(blockedAddressReason(address, true)).toBeUndefined();
    }
    expect(blockedAddressReason('169.254.169.254', true)).toBe('link-local');
    expect(blockedAddressReason('::ffff:169.254.169.254', true)).toBe('link-local');
    expect(blockedAddressReason('100.64.0.1', true)).toBe('shared (CGNAT)');
  });

  it('refuses what is not an IP address', () => {
    expect(blockedAddressReason('localhost', false)).toBe('reserved');
  });
});

describe('the webhook retry schedule', () => {
  it('spans about a day over 8 attempts and scales for tests', () => {
    const waits = Array.from({ length: 8 }, (_, n) => retryDelayMs(n));
    expect(waits).toEqual([0, 5e3, 300e3, 1800e3, 7200e3, 18000e3, 36000e3, 36000e3]);
    const totalHours = waits.reduce((sum, wait) => sum + wait, 0) / 3600e3;
    expect(totalHours).toBeGreaterThan(24);
    expect(totalHours).toBeLessThan(30);
    expect(retryDelayMs(1, 0.001)).toBe(5);
    expect(retryDelayMs(20)).toBe(36000e3);
  });
});
