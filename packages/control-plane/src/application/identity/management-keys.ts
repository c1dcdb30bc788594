import { createHash, randomBytes } from 'node:crypto';

export const MANAGEMENT_KEY_PREFIX = 'rmk_';

/** A new management key: `rmk_` and 32 random bytes in base64url. Only its hash is stored. */
export function newManagementKey(): { key: string; prefix: string; hash: string } {
  const key = `${MANAGEMENT_KEY_PREFIX}${randomBytes(32).toString('base64url')}`;
  return { key, prefix: key.slice(0, 12), hash: hashManagementKey(key) };
}

export function hashManagementKey(key: string): string {
  return createHash('sha256').update(key).digest('hex');
}
