import { createLocalJWKSet, createRemoteJWKSet, type JWTPayload, jwtVerify } from 'jose';
import type { OidcSettings } from '../../config.ts';
import { BUILT_IN_AUDIENCE } from './audience.ts';
import type { BuiltInIssuer } from './built-in-issuer.ts';

/** The identity a valid token carries. */
export interface Identity {
  readonly subject: string;
  readonly email: string;
  readonly groups: readonly string[];
  /** Signed by the built-in issuer (the only tokens the built-in 2FA applies to). */
  readonly builtIn: boolean;
  /** The token carries a verified second factor (`amr` holds `otp`). */
  readonly secondFactor: boolean;
  /** When the token expires (`exp`), if it says. */
  readonly expiresAt: Date | undefined;
}

export type TokenVerifier = (token: string) => Promise<Identity | undefined>;

function identityOf(
  payload: JWTPayload,
  groupsClaim: string,
  builtIn: boolean,
): Identity | undefined {
  const email = typeof payload.email === 'string' ? payload.email.toLowerCase() : undefined;
  if (!payload.sub || !email) return undefined;
  const groups = payload[groupsClaim];
  return {
    subject: `${payload.iss ?? ''}#${payload.sub}`,
    email,
    groups: Array.isArray(groups) ? groups.filter((g): g is string => typeof g === 'string') : [],
    builtIn,
    secondFactor: Array.isArray(payload.amr) && payload.amr.includes('otp'),
    expiresAt: typeof payload.exp === 'number' ? new Date(payload.exp * 1000) : undefined,
  };
}

/** Finds the JWKS address from the issuer's OpenID metadata. */
async function discoverJwksUrl(issuer: string): Promise<string> {
  const response = await fetch(
    new URL('.well-known/openid-configuration', issuer.endsWith('/') ? issuer : `${issuer}/`),
  );
  if (!response.ok) throw new Error(`OIDC discovery at ${issuer} answered ${response.status}.`);
  const metadata = (await response.json()) as { jwks_uri?: unknown };
  if (typeof metadata.jwks_uri !== 'string')
    throw new Error(`OIDC discovery at ${issuer} gave no jwks_uri.`);
  return metadata.jwks_uri;
}

/** The verifier of a process that serves no API: it never has a token to verify. */
export const refuseEveryToken: TokenVerifier = async () => undefined;

/** Verifies tokens of an external OIDC provider against its JWKS (fetched and cached by jose). */
export async function oidcTokenVerifier(settings: OidcSettings): Promise<TokenVerifier> {
  const jwks = createRemoteJWKSet(
    new URL(settings.jwksUrl ?? (await discoverJwksUrl(settings.issuer))),
  );
  return async (token) => {
    try {
      const { payload } = await jwtVerify(token, jwks, {
        issuer: settings.issuer,
        audience: settings.audience,
      });
      return identityOf(payload, settings.groupsClaim, false);
    } catch {
      return undefined;
    }
  };
}

/** Verifies tokens of the built-in issuer. */
export function builtInTokenVerifier(issuer: BuiltInIssuer): TokenVerifier {
  const jwks = createLocalJWKSet(issuer.jwks());
  return async (token) => {
    try {
      const { payload } = await jwtVerify(token, jwks, {
        issuer: issuer.issuer,
        audience: BUILT_IN_AUDIENCE,
      });
      return identityOf(payload, 'groups', true);
    } catch {
      return undefined;
    }
  };
}
