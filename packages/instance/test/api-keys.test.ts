import { createHmac } from 'node:crypto';
import { describe, expect, it } from 'vitest';
import { ApiKeyVerifier, deriveApiKey, newKeyId, newKeySecret } from '../src/api-keys.ts';

describe('instance API keys', () => {
  const secret = Buffer.alloc(32, 7);
  const keyId = '0123456789abcdef';

  it('derive as rxk_<keyId>.<base64url HMAC-SHA256 of the key id under the secret>', () => {
    const expected = createHmac('sha256', secret).update(keyId).digest('base64url');
    expect(deriveApiKey(secret, keyId)).toBe(`rxk_${keyId}.${expected}`);
  });

  it('verify only allowed ids with a matching hmac, and stop at once when revoked', () => {
    const verifier = new ApiKeyVerifier(secret, [keyId]);
    const key = deriveApiKey(secret, keyId);
    expect(verifier.verifyHeader(`Bearer ${key}`)).toBe(true);
    expect(verifier.verifyHeader(key)).toBe(false);
    expect(verifier.verifyHeader(undefined)).toBe(false);
    expect(verifier.verifyHeader(`Bearer ${deriveApiKey(Buffer.alloc(32, 8), keyId)}`)).toBe(false);
    const otherId = newKeyId();
    expect(verifier.verifyHeader(`Bearer ${deriveApiKey(secret, otherId)}`)).toBe(false);
    verifier.setAllowed([otherId]);
    expect(verifier.verifyHeader(`Bearer ${key}`)).toBe(false);
    expect(verifier.verifyHeader(`Bearer ${deriveApiKey(secret, otherId)}`)).toBe(true);
  });

  it('makes 16-hex-digit key ids and 32-byte secrets', () => {
    expect(newKeyId()).toMatch(/^[0-9a-f]{16}$/);
    expect(newKeySecret()).toHaveLength(32);
  });
});
