import { readFileSync } from 'node:fs';
import { join } from 'node:path';
import { importJWK, type JWK, SignJWT } from 'jose';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import {
  POSTGRES_STORE,
  startTestControlPlane,
  type TestControlPlane,
} from './control-plane-harness.ts';

/** A login link signed with the data folder's key but claims of the test's choosing. */
async function craftLink(
  cp: TestControlPlane,
  claims: { email: string; audience: string; expiresAt: number },
): Promise<string> {
  const jwk = JSON.parse(readFileSync(join(cp.dataDir, 'issuer/signing-key.json'), 'utf8')) as JWK;
  return new SignJWT({ email: claims.email, groups: [] })
    .setProtectedHeader({ alg: 'ES256', kid: jwk.kid ?? '' })
    .setIssuer('urn:replix:built-in-issuer')
    .setAudience(claims.audience)
    .setJti(crypto.randomUUID())
    .setIssuedAt(claims.expiresAt - 900)
    .setExpirationTime(claims.expiresAt)
    .sign(await importJWK(jwk, 'ES256'));
}

describe.each(POSTGRES_STORE)('one-time login links on the %s store', (kind) => {
  let cp: TestControlPlane;
  beforeAll(async () => {
    cp = await startTestControlPlane(kind);
  });
  afterAll(() => cp?.close());

  const redeem = (code: unknown) =>
    cp.request('POST', '/v1/auth/login-links/redeem', { body: { code } });

  it('signs in once, with no bearer token, and gives a token for the link’s user', async () => {
    const code = await cp.context.issuer!.signLoginLink({ email: 'Link.User@Example.com' });
    const first = await redeem(code);
    expect(first.status).toBe(200);
    expect(Date.parse(first.body.expiresAt)).toBeGreaterThan(Date.now() + 11 * 3600 * 1000);
    const account = await cp.request('GET', '/v1/account', { token: first.body.token });
    expect(account.status).toBe(200);
    expect(account.body.user.email).toBe('link.user@example.com');
    expect(account.body.user.admin).toBe(false);

    const again = await redeem(code);
    expect(again.status).toBe(404);
    expect(again.body.error).toBe('not_found');
    expect(again.body.message).toMatch(/already used/);
  });

  it('carries the service-admins group when the link was made for an admin', async () => {
    const code = await cp.context.issuer!.signLoginLink({ email: 'ops@example.com', admin: true });
    const { body } = await redeem(code);
    const customers = await cp.request('GET', '/v1/admin/customers', { token: body.token });
    expect(customers.status).toBe(200);
  });

  it('refuses an expired link, a link of another audience, a tampered link and garbage', async () => {
    const expired = await craftLink(cp, {
      email: 'late@example.com',
      audience: 'replix-login-link',
      expiresAt: Math.floor(Date.now() / 1000) - 60,
    });
    const apiToken = await cp.token('token@example.com');
    const valid = await cp.context.issuer!.signLoginLink({ email: 'x@example.com' });
    const tampered = `${valid.slice(0, -4)}AAAA`;
    for (const code of [expired, apiToken, tampered, 'not-a-link']) {
      const answer = await redeem(code);
      expect(answer.status).toBe(404);
      expect(answer.body.error).toBe('not_found');
    }
    expect((await redeem('')).status).toBe(400);
  });

  it('is never accepted as a bearer token itself', async () => {
    const code = await cp.context.issuer!.signLoginLink({ email: 'bearer@example.com' });
    const answer = await cp.request('GET', '/v1/account', { token: code });
    expect(answer.status).toBe(401);
  });
});

describe.each(POSTGRES_STORE)('the dashboard site on the %s store', (kind) => {
  let cp: TestControlPlane;
  beforeAll(async () => {
    cp = await startTestControlPlane(kind);
  });
  afterAll(() => cp?.close());

  it('answers page addresses with the app and unknown API paths with the JSON envelope', async () => {
    for (const path of ['/', '/databases/123/config', '/sign-in']) {
      const response = await fetch(`${cp.url}${path}`, { headers: { accept: 'text/html' } });
      expect(response.headers.get('content-type')).toMatch(/^text\/html/);
      expect(response.headers.get('cache-control')).toBe('no-cache');
      // 200 with the built app; 503 with a page that says how to build it.
      expect([200, 503]).toContain(response.status);
      expect(await response.text()).toMatch(/<html/i);
    }
    const api = await fetch(`${cp.url}/v1/nothing-here`, { headers: { accept: 'text/html' } });
    expect(api.status).toBe(404);
    expect(await api.json()).toEqual({ error: 'not_found', message: 'No such route.' });
  });

  it('serves the built assets without a token, cached for good, and nothing outside them', async () => {
    const index = await fetch(`${cp.url}/`, { headers: { accept: 'text/html' } });
    if (index.status !== 200) return expect(index.status).toBe(503);
    const html = await index.text();
    const script = /src="(\/assets\/[^"]+\.js)"/.exec(html)?.[1];
    expect(script).toBeDefined();
    const asset = await fetch(`${cp.url}${script}`);
    expect(asset.status).toBe(200);
    expect(asset.headers.get('cache-control')).toContain('immutable');
    // Read to the end: a response left unread holds the connection, and the server's close waits.
    expect((await asset.text()).length).toBeGreaterThan(0);
    const outside = await fetch(`${cp.url}/assets/..%2f..%2fpackage.json`);
    expect(outside.status).toBe(400);
    expect(((await outside.json()) as { error: string }).error).toBe('validation_failed');
  });
});
