import { generateKeyPairSync } from 'node:crypto';
import { once } from 'node:events';
import { createServer } from 'node:http';
import type { AddressInfo } from 'node:net';
import type { Configuration, KoaContextWithOIDC } from 'oidc-provider';

export interface LocalOidcOptions {
  /** The `aud` of every access token (the control plane's `REPLIX_OIDC_AUDIENCE`). */
  readonly audience: string;
  /** The dashboard: a public client (no secret) using the code flow with PKCE. */
  readonly dashboard: {
    readonly clientId: string;
    readonly redirectUris: readonly string[];
    readonly postLogoutRedirectUris: readonly string[];
  };
  /** The CLI: a public client using the device authorization grant (RFC 8628). */
  readonly cli: { readonly clientId: string };
  /** How long a device code lives (seconds, default 600): a test of expiry shortens it. */
  readonly deviceCodeTtl?: number;
  /** The groups claim of a user who signs in as this login (default none). */
  readonly groupsOf?: (login: string) => readonly string[];
}

export interface LocalOidc {
  /** The issuer, `http://127.0.0.1:<port>`; its discovery document is at the usual place. */
  readonly issuer: string;
  close(): Promise<void>;
}

/** The email a login typed into the provider's form signs in as. */
export function localOidcEmail(login: string): string {
  return login.includes('@') ? login : `${login}@example.com`;
}

/**
 * A real OpenID provider (`oidc-provider`) on a loopback port, for the sign-in tests: its
 * development login form takes any login and password (the login is the subject, the email
 * is `localOidcEmail(login)`), access tokens are JWTs for `audience` (resource indicators,
 * granted by default), and it has the device flow and RP-initiated logout.
 */
export async function startLocalOidc(options: LocalOidcOptions): Promise<LocalOidc> {
  // Loaded here so the testkit's other users never load the provider.
  const { default: Provider } = await import('oidc-provider');
  const server = createServer();
  server.listen(0, '127.0.0.1');
  await once(server, 'listening');
  const issuer = `http://127.0.0.1:${(server.address() as AddressInfo).port}`;
  const { privateKey } = generateKeyPairSync('rsa', { modulusLength: 2048 });
  const signingKey = { ...privateKey.export({ format: 'jwk' }), kid: 'local-1', alg: 'RS256' };
  const claimsOf = (login: string) => ({
    email: localOidcEmail(login),
    email_verified: true,
    groups: [...(options.groupsOf?.(login) ?? [])],
  });
  const configuration: Configuration = {
    clients: [
      {
        client_id: options.dashboard.clientId,
        token_endpoint_auth_method: 'none',
        grant_types: ['authorization_code'],
        response_types: ['code'],
        redirect_uris: [...options.dashboard.redirectUris],
        post_logout_redirect_uris: [...options.dashboard.postLogoutRedirectUris],
      },
      {
        client_id: options.cli.clientId,
        token_endpoint_auth_method: 'none',
        grant_types: ['urn:ietf:params:oauth:grant-type:device_code'],
        response_types: [],
        redirect_uris: [],
      },
    ],
    jwks: { keys: [signingKey as never] },
    cookies: { keys: ['local-oidc-cookie-key'] },
    claims: { openid: ['sub'], email: ['email', 'email_verified'] },
    findAccount: async (_ctx, id) => ({
      accountId: id,
      claims: async () => ({ sub: id, ...claimsOf(id) }),
    }),
    // The control plane reads the user's email (and groups) from the access token.
    extraTokenClaims: async (_ctx, token) =>
      'accountId' in token && typeof token.accountId === 'string'
        ? claimsOf(token.accountId)
        : undefined,
    ttl: { DeviceCode: options.deviceCodeTtl ?? 600 },
    features: {
      devInteractions: { enabled: true },
      deviceFlow: { enabled: true },
      rpInitiatedLogout: { enabled: true },
      resourceIndicators: {
        enabled: true,
        defaultResource: async () => options.audience,
        useGrantedResource: async () => true,
        getResourceServerInfo: async (_ctx: KoaContextWithOIDC, resource: string) => {
          if (resource !== options.audience) throw new Error(`unknown resource ${resource}`);
          return {
            scope: 'replix',
            audience: options.audience,
            accessTokenFormat: 'jwt',
            jwt: { sign: { alg: 'RS256' } },
          };
        },
      },
    },
  };
  const provider = new Provider(issuer, configuration);
  server.on('request', provider.callback());
  return {
    issuer,
    close: async () => {
      server.closeAllConnections();
      await new Promise<void>((resolve) => server.close(() => resolve()));
    },
  };
}
