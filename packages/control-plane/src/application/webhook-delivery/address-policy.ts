import { BlockList, isIPv4, isIPv6 } from 'node:net';

/** Why an address is off limits, in words for error messages. */
export type BlockedReason =
  | 'loopback'
  | 'private'
  | 'link-local'
  | 'shared (CGNAT)'
  | 'unspecified'
  | 'multicast'
  | 'reserved'
  | 'translated (IPv6 to IPv4)';

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
  // Prefixes a gateway translates to an IPv4 address we cannot judge from here: where the
  // IPv4 address sits depends on the operator's prefix length (local-use NAT64, RFC 8215), or
  // it is a relay's or an obfuscated client's (6to4, Teredo), or the translator is stateless
  // and may map to anything (SIIT's IPv4-translated form, RFC 2765).
  { net: '64:ff9b:1::', prefix: 48, reason: 'translated (IPv6 to IPv4)' },
  { net: '2002::', prefix: 16, reason: 'translated (IPv6 to IPv4)' },
  { net: '2001::', prefix: 32, reason: 'translated (IPv6 to IPv4)' },
  { net: '::ffff:0:0:0', prefix: 96, reason: 'translated (IPv6 to IPv4)' },
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

/**
 * Prefixes whose last 32 bits are the IPv4 address connected to: IPv4-mapped (`::ffff:a.b.c.d`,
 * the socket connects to the IPv4 address itself) and the NAT64 well-known prefix
 * (`64:ff9b::/96`, RFC 6052: translated to exactly that address, never a private one; what
 * DNS64 answers for an IPv4-only receiver).
 */
const EMBEDDING = new BlockList();
EMBEDDING.addSubnet('::ffff:0:0', 96, 'ipv6');
EMBEDDING.addSubnet('64:ff9b::', 96, 'ipv6');

/** The IPv4 address inside `canonical` (an IPv6 address as 8 words) when it carries one. */
function embeddedIpv4(canonical: string, words: readonly number[]): string | undefined {
  if (!EMBEDDING.check(canonical, 'ipv6')) return undefined;
  const high = words[6] ?? 0;
  const low = words[7] ?? 0;
  return [high >> 8, high & 0xff, low >> 8, low & 0xff].join('.');
}

/**
 * The eight 16-bit words of an IPv6 address `isIPv6` accepts, in any of its forms: `::`
 * compressed or written out, leading zeros, upper case, a dotted IPv4 tail, a zone id
 * (`%eth0`, which says which interface, not where: dropped).
 */
function ipv6Words(address: string): number[] {
  let text = address.toLowerCase().replace(/%.*$/, '');
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

function reasonFor(address: string): BlockedReason | undefined {
  if (isIPv4(address)) return IPV4_LISTS.find(({ list }) => list.check(address, 'ipv4'))?.reason;
  if (!isIPv6(address)) return 'reserved';
  // One written form for the checks: BlockList misreads some others (a zone id passes them all).
  const words = ipv6Words(address);
  const canonical = words.map((word) => word.toString(16)).join(':');
  const inner = embeddedIpv4(canonical, words);
  if (inner !== undefined) return reasonFor(inner);
  return IPV6_LISTS.find(({ list }) => list.check(canonical, 'ipv6'))?.reason;
}

/**
 * Why a webhook may not be sent to `address` (an IP address), or undefined when it may.
 * IPv4-mapped and well-known-prefix NAT64 forms are judged by the IPv4 address inside them;
 * other IPv6 forms that translate to IPv4 are refused. `allowLocal` (the development setting)
 * lets loopback and private addresses through.
 */
export function blockedAddressReason(
  address: string,
  allowLocal: boolean,
): BlockedReason | undefined {
  const reason = reasonFor(address);
  if (reason && allowLocal && LOCAL_REASONS.has(reason)) return undefined;
  return reason;
}
