import { createHmac } from 'node:crypto';
import { deriveApiKey, newKeyId, newKeySecret } from '@replix/instance-protocol';
import { describe, expect, it } from 'vitest';
import { ApiKeyVerifier, scopeGrants } from '../src/http/api-keys.ts';

describe('instance API keys', () => {
  const secret = Buffer.alloc(32, 7);
  const keyId = '0123456789abcdef';
  const adminId = 'fedcba9876543210';
  const bearer = (id: string, under = secret) => `Bearer ${deriveApiKey(under, id)}`;

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
    expect(verifier.verifyHeader(bearer(keyId, Buffer.alloc(32, 8)))).toBe(false);
    const otherId = newKeyId();
    expect(verifier.verifyHeader(bearer(otherId))).toBe(false);
    verifier.setAllowed({ keyIds: [otherId], adminKeyIds: [] });
    expect(verifier.verifyHeader(`Bearer ${key}`)).toBe(false);
    expect(verifier.verifyHeader(bearer(otherId))).toBe(true);
  });

  it('tell query keys from admin keys by the set their id is in; an id in both is admin', () => {
    const verifier = new ApiKeyVerifier(secret, [keyId], [adminId]);
    expect(verifier.scopeOf(bearer(keyId))).toBe('query');
    expect(verifier.scopeOf(bearer(adminId))).toBe('admin');
    expect(verifier.scopeOf(bearer(newKeyId()))).toBeNull();
    verifier.setAllowed({ keyIds: [keyId, adminId], adminKeyIds: [keyId] });
    expect(verifier.scopeOf(bearer(keyId))).toBe('admin');
    expect(verifier.scopeOf(bearer(adminId))).toBe('query');
  });

  it('forget a cached verification when the key moves scope or is revoked', () => {
    const verifier = new ApiKeyVerifier(secret, [], [adminId]);
    expect(verifier.scopeOf(bearer(adminId))).toBe('admin');
    verifier.setAllowed({ keyIds: [adminId], adminKeyIds: [] });
    expect(verifier.scopeOf(bearer(adminId))).toBe('query');
    verifier.setAllowed({ keyIds: [], adminKeyIds: [] });
    expect(verifier.scopeOf(bearer(adminId))).toBeNull();
  });

  it('answer for each header value, however like the one verified before it', () => {
    const verifier = new ApiKeyVerifier(secret, [keyId], [adminId]);
    const valid = bearer(keyId);
    // One character changed at the end of the hmac: the same length, the same start.
    const last = valid.at(-1) === 'A' ? 'B' : 'A';
    const tampered = `${valid.slice(0, -1)}${last}`;
    for (let round = 0; round < 3; round++) {
      // A string made anew for each request, as Node makes each header's.
      expect(verifier.identify(`${valid.slice(0, 8)}${valid.slice(8)}`)).toEqual({
        keyId,
        scope: 'query',
      });
      expect(verifier.identify(tampered)).toBeNull();
      expect(verifier.identify(valid)?.keyId).toBe(keyId);
      expect(verifier.identify(bearer(adminId))).toEqual({ keyId: adminId, scope: 'admin' });
    }
  });

  it('refuse header values longer than a key can be, even with a valid key inside', () => {
    const verifier = new ApiKeyVerifier(secret, [keyId]);
    expect(verifier.scopeOf(`${bearer(keyId)} `)).toBeNull();
    expect(verifier.scopeOf(`Bearer  ${deriveApiKey(secret, keyId)}`)).toBeNull();
    expect(verifier.scopeOf(`${bearer(keyId)}${'x'.repeat(100_000)}`)).toBeNull();
  });

  it('keep verifying correctly past the cache size, old keys included', () => {
    const ids = Array.from({ length: 600 }, () => newKeyId());
    const verifier = new ApiKeyVerifier(secret, ids);
    for (const id of ids) expect(verifier.scopeOf(bearer(id))).toBe('query');
    for (const id of ids.slice(0, 10)) expect(verifier.scopeOf(bearer(id))).toBe('query');
  });

  it('grant query endpoints to both scopes and admin endpoints to admin keys only', () => {
    expect(scopeGrants('query', 'query')).toBe(true);
    expect(scopeGrants('admin', 'query')).toBe(true);
    expect(scopeGrants('admin', 'admin')).toBe(true);
    expect(scopeGrants('query', 'admin')).toBe(false);
  });

  it('makes 16-hex-digit key ids and 32-byte secrets', () => {
    expect(newKeyId()).toMatch(/^[0-9a-f]{16}$/);
    expect(newKeySecret()).toHaveLength(32);
  });
});
