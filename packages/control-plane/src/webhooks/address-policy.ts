import { BlockList, isIPv4, isIPv6 } from 'node:net';

/** Why an address is off limits, in words for error messages. */
export type BlockedReason =
  | 'loopback'
  | 'private'
  | 'link-local'
  | 'shared (CGNAT)'
  | 'unspecified'
  | 'multicast'
  | 'reserved';

interface Range {
  readonly net: string;
  readonly prefix: number;
  readonly reason: BlockedReason;
}

const IPV4_RANGES: readonly Range[] = [
  { net: '0.0.0.0', prefix: 8, reason: 'unspecified' },
  { net: '10.0.0.0', prefix: 8, reason: 'private' },
  { net: '100.64.0.0', prefix: 10, reason: 'shared (CGNAT)' },
  { net: '127.0.0.0', prefix: 8, reason: 'loopback' },
  // Includes 169.254.169.254, the cloud metadata service.
  { net: '169.254.0.0', prefix: 16, reason: 'link-local' },
  { net: '172.16.0.0', prefix: 12, reason: 'private' },
  { net: '192.0.0.0', prefix: 24, reason: 'reserved' },
  { net: '192.0.2.0', prefix: 24, reason: 'reserved' },
  { net: '192.168.0.0', prefix: 16, reason: 'private' },
  { net: '198.18.0.0', prefix: 15, reason: 'reserved' },
  { net: '198.51.100.0', prefix: 24, reason: 'reserved' },
  { net: '203.0.113.0', prefix: 24, reason: 'reserved' },
  { net: '224.0.0.0', prefix: 4, reason: 'multicast' },
  { net: '240.0.0.0', prefix: 4, reason: 'reserved' },
];

const IPV6_RANGES: readonly Range[] = [
  { net: '::', prefix: 128, reason: 'unspecified' },
  { net: '::1', prefix: 128, reason: 'loopback' },
  // IPv4-compatible (deprecated) addresses.
  { net: '::', prefix: 96, reason: 'reserved' },
  { net: '100::', prefix: 64, reason: 'reserved' },
  { net: '2001:db8::', prefix: 32, reason: 'reserved' },
  { net: 'fc00::', prefix: 7, reason: 'private' },
  { net: 'fe80::', prefix: 10, reason: 'link-local' },
  { net: 'fec0::', prefix: 10, reason: 'private' },
  { net: 'ff00::', prefix: 8, reason: 'multicast' },
];

/** Ranges a local receiver may use when REPLIX_WEBHOOKS_ALLOW_LOCAL is on. */
const LOCAL_REASONS: ReadonlySet<BlockedReason> = new Set(['loopback', 'private']);

function blockListOf(ranges: readonly Range[], family: 'ipv4' | 'ipv6') {
  // Most specific first, so `::1` reads as loopback, not as the IPv4-compatible /96.
  return [...ranges]
    .sort((a, b) => b.prefix - a.prefix)
    .map((range) => {
      const list = new BlockList();
      list.addSubnet(range.net, range.prefix, family);
      return { list, reason: range.reason };
    });
}

const IPV4_LISTS = blockListOf(IPV4_RANGES, 'ipv4');
const IPV6_LISTS = blockListOf(IPV6_RANGES, 'ipv6');

/** The IPv4 address an IPv6 address carries: IPv4-mapped (`::ffff:a.b.c.d`) or NAT64 (`64:ff9b::/96`). */
function embeddedIpv4(address: string): string | undefined {
  const list = new BlockList();
  list.addSubnet('::ffff:0:0', 96, 'ipv6');
  list.addSubnet('64:ff9b::', 96, 'ipv6');
  if (!list.check(address, 'ipv6')) return undefined;
  const words = expandIpv6(address);
  const high = words[6] ?? 0;
  const low = words[7] ?? 0;
  return [high >> 8, high & 0xff, low >> 8, low & 0xff].join('.');
}

/** The eight 16-bit words of an IPv6 address (handles `::` and a dotted IPv4 tail). */
function expandIpv6(address: string): number[] {
  let text = address.toLowerCase();
  const dotted = /(\d+\.\d+\.\d+\.\d+)$/.exec(text);
  if (dotted?.[1]) {
    const [a, b, c, d] = dotted[1].split('.').map(Number) as [number, number, number, number];
    text = `${text.slice(0, -dotted[1].length)}${((a << 8) | b).toString(16)}:${((c << 8) | d).toString(16)}`;
  }
  const [head = '', tail] = text.split('::');
  const part = (value: string) => (value ? value.split(':').map((word) => parseInt(word, 16)) : []);
  const left = part(head);
  const right = tail === undefined ? [] : part(tail);
  const fill = new Array(8 - left.length - right.length).fill(0);
  return [...left, ...fill, ...right];
}

/**
 * Why a webhook may not be sent to `address` (an IP address), or undefined when it may.
 * IPv4-mapped and NAT64 IPv6 forms are judged by the IPv4 address inside them.
 * `allowLocal` (the development setting) lets loopback and private addresses through.
 */
export function blockedAddressReason(
  address: string,
  allowLocal: boolean,
): BlockedReason | undefined {
  let reason: BlockedReason | undefined;
  if (isIPv4(address)) {
    reason = IPV4_LISTS.find(({ list }) => list.check(address, 'ipv4'))?.reason;
  } else if (isIPv6(address)) {
    const inner = embeddedIpv4(address);
    if (inner !== undefined) return blockedAddressReason(inner, allowLocal);
    reason = IPV6_LISTS.find(({ list }) => list.check(address, 'ipv6'))?.reason;
  } else {
    return 'reserved';
  }
  if (reason && allowLocal && LOCAL_REASONS.has(reason)) return undefined;
  return reason;
}
