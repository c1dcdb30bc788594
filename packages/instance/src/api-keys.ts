import { createHmac, randomBytes, timingSafeEqual } from 'node:crypto';

/**
 * Instance API keys: `rxk_<keyId>.<hmac>` where `<hmac>` is the base64url (unpadded) HMAC-SHA256
 * of the ASCII key id under the instance's key secret. An instance accepts a key when its id is
 * in the allowed set and its hmac verifies; revoking a key is removing its id from the set.
 * Key ids are 16 lowercase hex characters.
 */
const KEY_PATTERN = /^rxk_([0-9a-f]{16})\.([A-Za-z0-9_-]{43})$/;

export function newKeyId(): string {
  return randomBytes(8).toString('hex');
}

export function newKeySecret(): Buffer {
  return randomBytes(32);
}

function mac(secret: Buffer, keyId: string): Buffer {
  return createHmac('sha256', secret).update(keyId, 'ascii').digest();
}

export function deriveApiKey(secret: Buffer, keyId: string): string {
  return `rxk_${keyId}.${mac(secret, keyId).toString('base64url')}`;
}

/** Verified header values remembered so a busy client's key is not re-hashed per request. */
const VERIFIED_CACHE_SIZE = 1024;

export class ApiKeyVerifier {
  readonly #secret: Buffer;
  #allowed: ReadonlySet<string>;
  #verified = new Set<string>();

  constructor(secret: Buffer, keyIds: Iterable<string>) {
    this.#secret = secret;
    this.#allowed = new Set(keyIds);
  }

  /** Replaces the allowed key ids (a revoked key stops working at once). */
  setAllowed(keyIds: Iterable<string>): void {
    this.#allowed = new Set(keyIds);
    this.#verified = new Set();
  }

  /** Checks an `Authorization` header value; the comparison is constant-time. */
  verifyHeader(header: string | undefined): boolean {
    if (header === undefined) return false;
    if (this.#verified.has(header)) return true;
    if (!this.#verifyUncached(header)) return false;
    if (this.#verified.size >= VERIFIED_CACHE_SIZE) this.#verified.clear();
    this.#verified.add(header);
    return true;
  }

  #verifyUncached(header: string): boolean {
    if (!header.startsWith('Bearer ')) return false;
    const match = KEY_PATTERN.exec(header.slice(7).trim());
    if (!match) return false;
    const [, keyId, given] = match as unknown as [string, string, string];
    if (!this.#allowed.has(keyId)) return false;
    const expected = mac(this.#secret, keyId);
    const presented = Buffer.from(given, 'base64url');
    return presented.length === expected.length && timingSafeEqual(presented, expected);
  }
}
