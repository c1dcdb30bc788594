import type { Buffer } from 'node:buffer';
import { createHmac, randomBytes } from 'node:crypto';

/**
 * Instance API keys: `rxk_<keyId>.<hmac>` where `<hmac>` is the base64url (unpadded) HMAC-SHA256
 * of the ASCII key id under the instance's key secret. The control plane derives them (it holds
 * the secret and hands keys out); an instance verifies them (`ApiKeyVerifier`). An instance
 * accepts a key when its id is in one of its allowed sets and its hmac verifies; revoking a key
 * is removing its id from the sets. Key ids are 16 lowercase hex characters.
 */
export const API_KEY_PATTERN = /^rxk_([0-9a-f]{16})\.([A-Za-z0-9_-]{43})$/;

/**
 * What a key may do. `query` keys (the ones shipped to apps and browsers) may query and read the
 * schema; `admin` keys may also reload, pause or resume replication and read metrics and health
 * detail.
 */
export type KeyScope = 'query' | 'admin';

/** The key ids an instance accepts, by scope. An id in both sets is an admin key. */
export interface AllowedKeyIds {
  readonly keyIds: readonly string[];
  readonly adminKeyIds: readonly string[];
}

export function newKeyId(): string {
  return randomBytes(8).toString('hex');
}

export function newKeySecret(): Buffer {
  return randomBytes(32);
}

/** The HMAC a key of `keyId` carries under `secret`. */
export function apiKeyMac(secret: Buffer, keyId: string): Buffer {
  return createHmac('sha256', secret).update(keyId, 'ascii').digest();
}

export function deriveApiKey(secret: Buffer, keyId: string): string {
  return `rxk_${keyId}.${apiKeyMac(secret, keyId).toString('base64url')}`;
}
