import { describe, expect, it } from 'vitest';
import {
  type BlockedReason,
  blockedAddressReason,
} from '../src/application/webhook-delivery/address-policy.ts';
import {
  resolveWebhookTarget,
  WebhookTargetError,
} from '../src/application/webhook-delivery/resolve-webhook-target.ts';
import { retryDelayMs } from '../src/application/webhook-delivery/retry-schedule.ts';

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

  it('ignores a zone id: it names an interface, not where the address points', () => {
    expect(blockedAddressReason('fe80::1%eth0', false)).toBe('link-local');
    expect(blockedAddressReason('FE80::1%25', false)).toBe('link-local');
    expect(blockedAddressReason('::ffff:127.0.0.1%lo', false)).toBe('loopback');
    expect(blockedAddressReason('2606:4700:4700::1111%eth0', false)).toBeUndefined();
  });

  it('refuses what is not an IP address', () => {
    expect(blockedAddressReason('localhost', false)).toBe('reserved');
  });
});

/** Every written form of one IPv6 address: compressed, written out, upper case, dotted tail, zone id. */
function writtenForms(words: readonly number[]): string[] {
  const hex = words.map((word) => word.toString(16));
  const full = words.map((word) => word.toString(16).padStart(4, '0')).join(':');
  const dotted = `${hex.slice(0, 6).join(':')}:${[
    (words[6] ?? 0) >> 8,
    (words[6] ?? 0) & 0xff,
    (words[7] ?? 0) >> 8,
    (words[7] ?? 0) & 0xff,
  ].join('.')}`;
  // The longest run of zero words written `::`.
  let best = { start: -1, length: 0 };
  for (let start = 0; start < 8; start++) {
    let length = 0;
    while (start + length < 8 && words[start + length] === 0) length++;
    if (length > best.length) best = { start, length };
  }
  const compressed =
    best.length > 1
      ? `${hex.slice(0, best.start).join(':')}::${hex.slice(best.start + best.length).join(':')}`
      : hex.join(':');
  return [compressed, full, full.toUpperCase(), dotted, `${compressed}%eth0`, `${full}%1`];
}

/** IPv6 words from a 48-bit prefix, then `rest`. */
const words = (...parts: number[]) => parts;

describe('the webhook address policy on IPv6 forms that carry or translate to IPv4', () => {
  const TRANSLATED: BlockedReason = 'translated (IPv6 to IPv4)';
  it.each<[string, BlockedReason | undefined, number[]]>([
    // Local-use NAT64 (RFC 8215): where the IPv4 sits depends on the operator's prefix length.
    ['local-use NAT64 of 10.0.0.1', TRANSLATED, words(0x64, 0xff9b, 1, 0, 0, 0, 0x0a00, 1)],
    ['local-use NAT64 of 8.8.8.8', TRANSLATED, words(0x64, 0xff9b, 1, 0, 0, 0, 0x0808, 0x0808)],
    ['local-use NAT64, /48 end', TRANSLATED, words(0x64, 0xff9b, 1, 0xffff, 1, 2, 3, 4)],
    // 6to4 (2002:aabb:ccdd::/48 for the relay a.b.c.d).
    ['6to4 of 127.0.0.1', TRANSLATED, words(0x2002, 0x7f00, 1, 0, 0, 0, 0, 1)],
    ['6to4 of 8.8.8.8', TRANSLATED, words(0x2002, 0x0808, 0x0808, 0, 0, 0, 0, 1)],
    // Teredo (2001::/32): server and obfuscated client inside.
    ['Teredo', TRANSLATED, words(0x2001, 0, 0x4136, 0xe378, 0x8000, 0x63bf, 0x3fff, 0xfdd2)],
    ['Teredo of 127.0.0.1', TRANSLATED, words(0x2001, 0, 0x7f00, 1, 0, 0, 0x80ff, 0xfffe)],
    // SIIT IPv4-translated (::ffff:0:a.b.c.d).
    ['SIIT of 127.0.0.1', TRANSLATED, words(0, 0, 0, 0, 0xffff, 0, 0x7f00, 1)],
    ['SIIT of 8.8.8.8', TRANSLATED, words(0, 0, 0, 0, 0xffff, 0, 0x0808, 0x0808)],
    // The NAT64 well-known prefix (RFC 6052) and IPv4-mapped: judged by the IPv4 inside.
    ['NAT64 well-known of 127.0.0.1', 'loopback', words(0x64, 0xff9b, 0, 0, 0, 0, 0x7f00, 1)],
    ['NAT64 well-known of 10.1.2.3', 'private', words(0x64, 0xff9b, 0, 0, 0, 0, 0x0a01, 0x0203)],
    [
      'NAT64 well-known of 169.254.169.254',
      'link-local',
      words(0x64, 0xff9b, 0, 0, 0, 0, 0xa9fe, 0xa9fe),
    ],
    ['NAT64 well-known of 8.8.8.8', undefined, words(0x64, 0xff9b, 0, 0, 0, 0, 0x0808, 0x0808)],
    ['IPv4-mapped 127.0.0.1', 'loopback', words(0, 0, 0, 0, 0, 0xffff, 0x7f00, 1)],
    ['IPv4-mapped 192.168.0.1', 'private', words(0, 0, 0, 0, 0, 0xffff, 0xc0a8, 1)],
    ['IPv4-mapped 100.64.0.1', 'shared (CGNAT)', words(0, 0, 0, 0, 0, 0xffff, 0x6440, 1)],
    ['IPv4-mapped 8.8.8.8', undefined, words(0, 0, 0, 0, 0, 0xffff, 0x0808, 0x0808)],
    // IPv4-compatible (::a.b.c.d, deprecated): reserved whatever the IPv4.
    ['IPv4-compatible 8.8.8.8', 'reserved', words(0, 0, 0, 0, 0, 0, 0x0808, 0x0808)],
    ['IPv4-compatible 10.0.0.1', 'reserved', words(0, 0, 0, 0, 0, 0, 0x0a00, 1)],
  ])('%s: every written form is %s', (_name, reason, address) => {
    for (const form of writtenForms(address)) {
      expect([form, blockedAddressReason(form, false)]).toEqual([form, reason]);
      // Development's allowance for loopback and private never opens a translated form.
      if (reason === TRANSLATED) expect(blockedAddressReason(form, true)).toBe(TRANSLATED);
    }
  });

  it('leaves the rest of 2001::/23 and 2002::/16 neighbours alone', () => {
    expect(blockedAddressReason('2001:4860:4860::8888', false)).toBeUndefined();
    expect(blockedAddressReason('2001:1::1', false)).toBeUndefined();
    expect(blockedAddressReason('2003::1', false)).toBeUndefined();
    expect(blockedAddressReason('64:ff9b:2::1', false)).toBeUndefined();
  });
});

describe('resolving a webhook URL', () => {
  /** A resolver answering every name with `addresses` (a real name cannot be made to here). */
  const resolvingTo =
    (...addresses: string[]) =>
    async () =>
      addresses.map((address) => ({ address, family: address.includes(':') ? 6 : 4 }));

  it.each([
    ['64:ff9b:1::a00:1', 'translated (IPv6 to IPv4)'],
    ['2002:7f00:1::1', 'translated (IPv6 to IPv4)'],
    ['2001:0:4136:e378:8000:63bf:3fff:fdd2', 'translated (IPv6 to IPv4)'],
    ['::ffff:0:7f00:1', 'translated (IPv6 to IPv4)'],
    ['64:ff9b::7f00:1', 'loopback'],
    ['::ffff:169.254.169.254', 'link-local'],
    ['::808:808', 'reserved'],
    ['fe80::1%eth0', 'link-local'],
  ])('refuses a name resolving to %s (%s), beside a public address', async (address, reason) => {
    const attempt = resolveWebhookTarget(
      'https://hooks.example.com/in',
      false,
      resolvingTo('93.184.215.14', address),
    );
    await expect(attempt).rejects.toThrow(WebhookTargetError);
    await expect(attempt).rejects.toThrow(
      `The url resolves to a ${reason} address; webhooks are only sent to public addresses.`,
    );
  });

  it.each([
    'https://[64:ff9b:1::a00:1]/in',
    'https://[64:FF9B:1:0:0:0:10.0.0.1]/in',
    'https://[2002:7f00:0001::]/in',
    'https://[2001:0000:4136:e378:8000:63bf:3fff:fdd2]/in',
    'https://[::ffff:0:127.0.0.1]/in',
    'https://[0:0:0:0:ffff:0:808:808]/in',
  ])('refuses the literal URL %s', async (url) => {
    await expect(resolveWebhookTarget(url, false)).rejects.toThrow(
      'The url resolves to a translated (IPv6 to IPv4) address',
    );
  });

  it('accepts a name resolving to public addresses only, and connects to the first', async () => {
    const target = await resolveWebhookTarget(
      'https://hooks.example.com/in',
      false,
      resolvingTo('2606:4700:4700::1111', '64:ff9b::808:808', '::ffff:8.8.8.8'),
    );
    expect(target).toMatchObject({ host: 'hooks.example.com', address: '2606:4700:4700::1111' });
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
