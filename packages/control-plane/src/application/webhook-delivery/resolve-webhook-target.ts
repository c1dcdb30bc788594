import { lookup } from 'node:dns/promises';
import { isIP } from 'node:net';
import { blockedAddressReason } from './address-policy.ts';

/** The longest webhook URL accepted. */
export const MAX_URL_LENGTH = 2048;

/** A URL webhooks may not use, with the reason in words safe to show the caller. */
export class WebhookTargetError extends Error {
  constructor(message: string) {
    super(message);
    this.name = 'WebhookTargetError';
  }
}

/** Where to send: the URL, and the address it resolved to, checked, to connect to. */
export interface WebhookTarget {
  readonly url: URL;
  /** The host name without IPv6 brackets. */
  readonly host: string;
  readonly address: string;
  readonly family: 4 | 6;
}

/** Every address a host name resolves to (the system resolver, as connections use it). */
export type HostLookup = (host: string) => Promise<{ address: string; family: number }[]>;

const systemLookup: HostLookup = (host) => lookup(host, { all: true, verbatim: true });

/** Checks a URL's form (https, no credentials); throws WebhookTargetError. */
export function parseWebhookUrl(text: string, allowLocal: boolean): URL {
  let url: URL;
  try {
    url = new URL(text);
  } catch {
    throw new WebhookTargetError('url must be an absolute https:// URL.');
  }
  if (text.length > MAX_URL_LENGTH) {
    throw new WebhookTargetError(`url must be at most ${MAX_URL_LENGTH} characters.`);
  }
  const schemes = allowLocal ? ['https:', 'http:'] : ['https:'];
  if (!schemes.includes(url.protocol)) throw new WebhookTargetError('url must use https://.');
  if (url.username || url.password) {
    throw new WebhookTargetError('url must not contain a user name or password.');
  }
  return url;
}

/**
 * Resolves the URL's host (every address DNS gives) and refuses it when any address is
 * loopback, private, link-local, CGNAT, multicast or otherwise reserved (see
 * address-policy.ts). Called at registration and again before every attempt; the attempt then
 * connects to the address checked here, so DNS cannot change in between. Messages never
 * include the resolved addresses (that would make this a probe of internal DNS). `lookupHost`
 * is the system resolver but in tests, which cannot change what a real name resolves to.
 */
export async function resolveWebhookTarget(
  text: string,
  allowLocal: boolean,
  lookupHost: HostLookup = systemLookup,
): Promise<WebhookTarget> {
  const url = parseWebhookUrl(text, allowLocal);
  const host = url.hostname.replace(/^\[(.*)\]$/, '$1');
  let addresses: { address: string; family: number }[];
  if (isIP(host)) {
    addresses = [{ address: host, family: isIP(host) }];
  } else {
    try {
      addresses = await lookupHost(host);
    } catch {
      throw new WebhookTargetError(`The host ${host} of the url could not be resolved.`);
    }
    if (addresses.length === 0) {
      throw new WebhookTargetError(`The host ${host} of the url could not be resolved.`);
    }
  }
  for (const { address } of addresses) {
    const reason = blockedAddressReason(address, allowLocal);
    if (reason) {
      throw new WebhookTargetError(
        `The url resolves to a ${reason} address; webhooks are only sent to public addresses.`,
      );
    }
  }
  const first = addresses[0] as { address: string; family: number };
  return { url, host, address: first.address, family: first.family === 6 ? 6 : 4 };
}
