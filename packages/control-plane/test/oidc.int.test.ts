import { randomBytes } from 'node:crypto';
import { mkdtempSync, rmSync } from 'node:fs';
import { createServer, type Server } from 'node:http';
import type { AddressInfo } from 'node:net';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { exportJWK, generateKeyPair, SignJWT } from 'jose';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import {
  POSTGRES_STORE,
  startTestControlPlane,
  type TestControlPlane,
} from './control-plane-harness.ts';

/**
 * A stand-in identity provider: a real HTTP server publishing OpenID metadata and a JWKS, and
 * signing tokens with its own key, as Auth0, Keycloak or Entra would.
 */
async function startIdentityProvider() {
  const { privateKey, publicKey } = await generateKeyPair('RS256');
  const jwk = { ...(await exportJWK(publicKey)), kid: 'idp-1', alg: 'RS256', use: 'sig' };
  let issuer = '';
  const server: Server = createServer((request, response) => {
    response.setHeader('content-type', 'application/json');
    if (request.url === '/.well-known/openid-configuration') {
      response.end(JSON.stringify({ issuer, jwks_uri: `${issuer}/jwks` }));
    } else if (request.url === '/jwks') {
      response.end(JSON.stringify({ keys: [jwk] }));
    } else {
      response.statusCode = 404;
      response.end('{}');
    }
  });
  await new Promise<void>((resolve) => server.listen(0, '127.0.0.1', resolve));
  issuer = `http://127.0.0.1:${(server.address() as AddressInfo).port}`;
  return {
    issuer,
    sign(
      claims: Record<string, unknown>,
      options: { audience?: string; issuer?: string; expiresIn?: string } = {},
    ) {
      return new SignJWT(claims)
        .setProtectedHeader({ alg: 'RS256', kid: 'idp-1' })
        .setIssuer(options.issuer ?? issuer)
        .setAudience(options.audience ?? 'replix-api')
        .setSubject(String(claims.email))
        .setIssuedAt()
        .setExpirationTime(options.expiresIn ?? '5m')
        .sign(privateKey);
    },
    close: () => new Promise<void>((resolve) => server.close(() => resolve())),
  };
}

describe.each(POSTGRES_STORE)('OIDC issuer on the %s store', (kind) => {
  let idp: Awaited<ReturnType<typeof startIdentityProvider>>;
  let cp: TestControlPlane;
  beforeAll(async () => {
    idp = await startIdentityProvider();
    cp = await startTestControlPlane(kind, {
      env: {
        REPLIX_OIDC_ISSUER: idp.issuer,
        REPLIX_OIDC_AUDIENCE: 'replix-api',
        REPLIX_OIDC_GROUPS_CLAIM: 'https://example.com/roles',
      },
    });
  });
  afterAll(async () => {
    await cp?.close();
    await idp?.close();
  });

  it('accepts the provider’s tokens, discovered through its metadata', async () => {
    const token = await idp.sign({ email: 'dev@example.com' });
    const response = await cp.request('GET', '/v1/management-keys', { token });
    expect(response.status).toBe(200);
  });

  it('rejects a wrong audience, a wrong issuer, an expired token and another key', async () => {
    const rejected = [
      await idp.sign({ email: 'dev@example.com' }, { audience: 'someone-else' }),
      await idp.sign({ email: 'dev@example.com' }, { issuer: 'https://evil.example.com' }),
      await idp.sign({ email: 'dev@example.com' }, { expiresIn: '-1m' }),
      await cp.token('dev@example.com').catch(() => 'no-built-in-issuer'),
    ];
    for (const token of rejected) {
      const response = await cp.request('GET', '/v1/management-keys', { token });
      expect(response.status).toBe(401);
      expect(response.body.error).toBe('unauthorized');
    }
  });

  it('lets only members of service-admins (in the configured claim) use /admin', async () => {
    const admin = await idp.sign({
      email: 'ops@example.com',
      'https://example.com/roles': ['service-admins'],
    });
    const user = await idp.sign({ email: 'user@example.com', groups: ['service-admins'] });
    const asAdmin = await cp.request('GET', '/v1/admin/customers', { token: admin });
    expect(asAdmin.status).toBe(200);
    expect(asAdmin.body.map((c: { email: string }) => c.email)).toContain('ops@example.com');
    const asUser = await cp.request('GET', '/v1/admin/customers', { token: user });
    expect(asUser.status).toBe(403);
    expect(asUser.body.error).toBe('forbidden');
  });
});

describe('built-in issuer', () => {
  it('keeps its signing key in the data folder, so a token outlives a restart', async () => {
    const dataDir = mkdtempSync(join(tmpdir(), 'replix-issuer-'));
    const secret = randomBytes(32).toString('hex');
    const env = { REPLIX_DATA_DIR: dataDir, REPLIX_SECRET_KEY: secret };
    try {
      const first = await startTestControlPlane('pglite', { env });
      const token = await first.token('same@example.com', { admin: true });
      await first.close();
      const second = await startTestControlPlane('pglite', { env });
      const response = await second.request('GET', '/v1/admin/customers', { token });
      await second.close();
      expect(response.status).toBe(200);
    } finally {
      rmSync(dataDir, { recursive: true, force: true });
    }
  });
});
