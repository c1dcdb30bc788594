import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import {
  POSTGRES_STORE,
  startTestControlPlane,
  type TestControlPlane,
} from './control-plane-harness.ts';

// Small limits, and a window no test outlasts, so every count below is exact.
const LIMITS = {
  REPLIX_API_RATE_LIMIT_WINDOW_S: '600',
  REPLIX_API_RATE_LIMIT_CREDENTIAL: '4',
  REPLIX_API_RATE_LIMIT_ACCOUNT: '6',
  REPLIX_API_RATE_LIMIT_ADDRESS: '3',
};

/** The `RateLimit` field's items by name: remaining and seconds to reset. */
function standing(headers: Headers): Record<string, { r: number; t: number }> {
  const field = headers.get('ratelimit') ?? '';
  const items = [...field.matchAll(/"(\w+)";r=(\d+);t=(\d+)/g)];
  return Object.fromEntries(items.map((m) => [m[1], { r: Number(m[2]), t: Number(m[3]) }]));
}

describe.each(POSTGRES_STORE)('/v1 rate limits on the %s store', (kind) => {
  let cp: TestControlPlane;
  beforeAll(async () => {
    cp = await startTestControlPlane(kind, { env: LIMITS });
  });
  afterAll(() => cp?.close());

  /** An unauthenticated-or-not request from a chosen client address. */
  async function fromAddress(address: string, url: string, token?: string) {
    if (!cp.api) throw new Error('no api');
    return cp.api.inject({
      method: 'GET',
      url,
      remoteAddress: address,
      headers: token ? { authorization: `Bearer ${token}` } : {},
    });
  }

  it('refuses a credential past its limit with the envelope and the instances’ fields', async () => {
    const token = await cp.token('solo@rate.test');
    for (let i = 1; i <= 4; i++) {
      const answer = await cp.request('GET', '/v1/management-keys', { token });
      expect(answer.status).toBe(200);
      expect(answer.headers.get('ratelimit-policy')).toBe(
        '"credential";q=4;w=600, "account";q=6;w=600',
      );
      const now = standing(answer.headers);
      expect(now.credential?.r).toBe(4 - i);
      expect(now.account?.r).toBe(6 - i);
      expect(now.credential?.t).toBeGreaterThan(0);
      expect(now.credential?.t).toBeLessThanOrEqual(600);
      expect(answer.headers.get('x-ratelimit-limit')).toBeNull();
    }
    const refused = await cp.request('GET', '/v1/management-keys', { token });
    expect(refused.status).toBe(429);
    expect(refused.body).toEqual({
      error: 'too_many_requests',
      message: expect.stringContaining('This credential is over its rate limit of 4 requests'),
    });
    const retryAfter = Number(refused.headers.get('retry-after'));
    expect(retryAfter).toBeGreaterThanOrEqual(1);
    expect(retryAfter).toBeLessThanOrEqual(600);
    expect(standing(refused.headers).credential?.r).toBe(0);
    expect(refused.headers.get('x-request-id')).toBeTruthy();
  });

  it('counts every credential of an account in one account limit, and no other account', async () => {
    const owner = await cp.token('owner@rate.test');
    const keys: string[] = [];
    for (const name of ['ci', 'ops']) {
      const created = await cp.request('POST', '/v1/management-keys', {
        token: owner,
        body: { name },
      });
      expect(created.status).toBe(201);
      keys.push(created.body.key);
    }
    const [first, second] = keys as [string, string];
    // The account has spent 2 (the owner's creations): 3 by the first key leaves 1.
    for (let i = 0; i < 3; i++) {
      expect((await cp.request('GET', '/v1/management-keys', { token: first })).status).toBe(200);
    }
    const last = await cp.request('GET', '/v1/management-keys', { token: second });
    expect(last.status).toBe(200);
    expect(standing(last.headers)).toMatchObject({ credential: { r: 3 }, account: { r: 0 } });

    // The second key has its own quota left, but the account has none.
    const refused = await cp.request('GET', '/v1/management-keys', { token: second });
    expect(refused.status).toBe(429);
    expect(refused.body.error).toBe('too_many_requests');
    expect(refused.body.message).toContain("over the account's rate limit of 6 requests");
    expect(standing(refused.headers)).toMatchObject({ credential: { r: 2 }, account: { r: 0 } });
    expect((await cp.request('GET', '/v1/account', { token: owner })).status).toBe(429);

    // Another account is untouched by this one's exhaustion.
    const other = await cp.request('GET', '/v1/management-keys', {
      token: await cp.token('other@rate.test'),
    });
    expect(other.status).toBe(200);
    expect(standing(other.headers)).toMatchObject({ credential: { r: 3 }, account: { r: 5 } });
  });

  it('limits requests without a valid credential per client address', async () => {
    const flood = '192.0.2.10';
    for (let i = 1; i <= 3; i++) {
      const answer = await fromAddress(flood, '/v1/databases', i === 2 ? 'not-a-token' : undefined);
      expect(answer.statusCode).toBe(401);
      expect(answer.headers['ratelimit-policy']).toBe('"address";q=3;w=600');
      expect(answer.headers.ratelimit).toMatch(new RegExp(`^"address";r=${3 - i};t=\\d+$`));
    }
    for (const url of ['/v1/databases', '/v1/openapi.json', '/v1/no-such-route']) {
      const refused = await fromAddress(flood, url);
      expect(refused.statusCode).toBe(429);
      expect(refused.json()).toMatchObject({ error: 'too_many_requests' });
      expect(Number(refused.headers['retry-after'])).toBeGreaterThanOrEqual(1);
    }
    // Another address, and a valid credential from the flooding one, are not refused.
    expect((await fromAddress('192.0.2.11', '/v1/databases')).statusCode).toBe(401);
    const token = await cp.token('flooded@rate.test');
    expect((await fromAddress(flood, '/v1/databases', token)).statusCode).toBe(200);
  });

  it('counts an IPv6 client by its /64, as one address', async () => {
    for (const host of ['2001:db8:0:5::1', '2001:db8:0:5::2', '2001:db8:0:5::3']) {
      expect((await fromAddress(host, '/v1/databases')).statusCode).toBe(401);
    }
    expect((await fromAddress('2001:db8:0:5::ffff', '/v1/databases')).statusCode).toBe(429);
    expect((await fromAddress('2001:db8:0:6::1', '/v1/databases?x=1')).statusCode).toBe(401);
    expect((await fromAddress('2001:db8:0:5::9', '/v1?x=1')).statusCode).toBe(429);
  });

  it('never limits the probes nor anything outside /v1', async () => {
    const address = '192.0.2.20';
    for (let i = 0; i < 10; i++) {
      for (const url of ['/live', '/ready']) {
        const answer = await fromAddress(address, url);
        expect(answer.statusCode).not.toBe(429);
        expect(answer.headers.ratelimit).toBeUndefined();
      }
    }
    // The address has not spent its /v1 quota on them.
    expect((await fromAddress(address, '/v1/databases')).headers.ratelimit).toMatch(
      /^"address";r=2;/,
    );
  });
});
