import { Buffer } from 'node:buffer';
import { timingSafeEqual } from 'node:crypto';
import {
  type AllowedKeyIds,
  API_KEY_PATTERN,
  apiKeyMac,
  type KeyScope,
} from '@replix/instance-protocol';

/** `Bearer rxk_` + 16 + `.` + 43: no longer header value can hold a valid key. */
const MAX_KEY_HEADER_LENGTH = 'Bearer rxk_'.length + 16 + 1 + 43;

/** A key that verified: its id (what rate limits count by) and its scope. */
export interface VerifiedKey {
  readonly keyId: string;
  readonly scope: KeyScope;
}

/** True when a key of scope `held` may call an endpoint that needs `needed`. */
export function scopeGrants(held: KeyScope, needed: KeyScope): boolean {
  return held === 'admin' || needed === 'query';
}

/**
 * Verified header values remembered so a busy client's key is not re-hashed per request: a
 * fixed number of entries, each at most `MAX_KEY_HEADER_LENGTH` characters, oldest evicted first.
 */
const VERIFIED_CACHE_SIZE = 256;

export class ApiKeyVerifier {
  readonly #secret: Buffer;
  #scopes = new Map<string, KeyScope>();
  #verified = new Map<string, VerifiedKey>();
  /**
   * The header value verified last, and its key: most requests carry the value the request
   * before carried (one app, one key), and comparing it costs a fraction of hashing it anew
   * for the map (a header's string is new with each request).
   */
  #lastHeader: string | undefined;
  #lastKey: VerifiedKey | null = null;
  readonly #listeners: ((allowed: AllowedKeyIds) => void)[] = [];

  constructor(secret: Buffer, keyIds: Iterable<string>, adminKeyIds: Iterable<string> = []) {
    this.#secret = secret;
    this.setAllowed({ keyIds: [...keyIds], adminKeyIds: [...adminKeyIds] });
  }

  /** Called with the allowed key ids at each `setAllowed` (the query threads follow them). */
  onChange(listener: (allowed: AllowedKeyIds) => void): void {
    this.#listeners.push(listener);
  }

  /** Replaces the allowed key ids (a revoked key stops working at once). */
  setAllowed(allowed: AllowedKeyIds): void {
    for (const listener of this.#listeners) listener(allowed);
    const scopes = new Map<string, KeyScope>();
    for (const id of allowed.keyIds) scopes.set(id, 'query');
    for (const id of allowed.adminKeyIds) scopes.set(id, 'admin');
    this.#scopes = scopes;
    this.#verified = new Map();
    this.#lastHeader = undefined;
  }

  /** The scope of the key in an `Authorization` header value, or null when it holds no valid key. */
  scopeOf(header: string | undefined): KeyScope | null {
    return this.identify(header)?.scope ?? null;
  }

  /** The key in an `Authorization` header value, or null when it holds no valid key. */
  identify(header: string | undefined): VerifiedKey | null {
    if (header === undefined || header.length > MAX_KEY_HEADER_LENGTH) return null;
    if (header === this.#lastHeader) return this.#lastKey;
    let key = this.#verified.get(header);
    if (key === undefined) {
      const verified = this.#verifyUncached(header);
      if (verified === null) return null;
      key = verified;
      if (this.#verified.size >= VERIFIED_CACHE_SIZE) {
        const oldest = this.#verified.keys().next().value;
        if (oldest !== undefined) this.#verified.delete(oldest);
      }
      this.#verified.set(header, key);
    }
    this.#lastHeader = header;
    this.#lastKey = key;
    return key;
  }

  /** Checks an `Authorization` header value holds a valid key of any scope. */
  verifyHeader(header: string | undefined): boolean {
    return this.scopeOf(header) !== null;
  }

  /** The comparison is constant-time. */
  #verifyUncached(header: string): VerifiedKey | null {
    if (!header.startsWith('Bearer ')) return null;
    const match = API_KEY_PATTERN.exec(header.slice(7));
    if (!match) return null;
    const [, keyId, given] = match as unknown as [string, string, string];
    const scope = this.#scopes.get(keyId);
    if (!scope) return null;
    const expected = apiKeyMac(this.#secret, keyId);
    const presented = Buffer.from(given, 'base64url');
    return presented.length === expected.length && timingSafeEqual(presented, expected)
      ? { keyId, scope }
      : null;
  }
}
