import { randomUUID } from 'node:crypto';
import { existsSync, mkdirSync, readFileSync, writeFileSync } from 'node:fs';
import { dirname, join } from 'node:path';
import { exportJWK, generateKeyPair, importJWK, type JWK, jwtVerify, SignJWT } from 'jose';
import { BUILT_IN_AUDIENCE } from './audience.ts';

export const ADMIN_GROUP = 'service-admins';
/** The built-in issuer's `iss`: fixed, so tokens survive a change of port or address. */
export const BUILT_IN_ISSUER = 'urn:replix:built-in-issuer';
const ALGORITHM = 'ES256';
/**
 * A login link's audience: distinct from the API's, so a link is never accepted as a bearer
 * token; it is only ever exchanged, once, at POST /v1/auth/login-links/redeem.
 */
const LOGIN_LINK_AUDIENCE = 'replix-login-link';
/** How long a login link can be redeemed. */
export const LOGIN_LINK_TTL_SECONDS = 15 * 60;

/** What a valid login link says: who signs in, and the id that makes it single-use. */
export interface LoginLinkClaims {
  readonly email: string;
  readonly admin: boolean;
  readonly linkId: string;
}

export interface TokenRequest {
  readonly email: string;
  readonly admin?: boolean;
  /** Lifetime in seconds; default 12 hours. */
  readonly ttlSeconds?: number;
  /**
   * The second factor was verified (POST /v1/auth/2fa/verify): the token carries
   * `amr: ['pwd', 'otp']`, which users with 2FA on need on every route.
   */
  readonly secondFactor?: boolean;
}

/** Where a data folder keeps the built-in issuer's signing key. */
function signingKeyPath(dataDir: string): string {
  return join(dataDir, 'issuer', 'signing-key.json');
}

/**
 * The embedded default's identity provider: one ES256 key pair kept in the data folder
 * (`issuer/signing-key.json`, readable only by its owner), a JWKS endpoint, and tokens with the
 * same claims an OIDC provider would send (`sub`, `email`, `groups`).
 */
export class BuiltInIssuer {
  readonly issuer: string;
  readonly #privateJwk: JWK;
  readonly #publicJwk: JWK;

  private constructor(issuer: string, privateJwk: JWK, publicJwk: JWK) {
    this.issuer = issuer;
    this.#privateJwk = privateJwk;
    this.#publicJwk = publicJwk;
  }

  /**
   * The issuer of a data folder a control plane has used, or undefined when the folder has no
   * signing key: a token made with a new key would be refused by every control plane there is.
   */
  static async openExisting(dataDir: string): Promise<BuiltInIssuer | undefined> {
    if (!existsSync(signingKeyPath(dataDir))) return undefined;
    return BuiltInIssuer.open(dataDir);
  }

  /** Loads the signing key from the data folder, making it on first use. */
  static async open(dataDir: string): Promise<BuiltInIssuer> {
    const path = signingKeyPath(dataDir);
    let privateJwk: JWK;
    try {
      privateJwk = JSON.parse(readFileSync(path, 'utf8')) as JWK;
    } catch {
      const { privateKey } = await generateKeyPair(ALGORITHM, { extractable: true });
      privateJwk = { ...(await exportJWK(privateKey)), kid: randomUUID(), alg: ALGORITHM };
      mkdirSync(dirname(path), { recursive: true, mode: 0o700 });
      try {
        writeFileSync(path, JSON.stringify(privateJwk), { mode: 0o600, flag: 'wx' });
      } catch {
        // Another process made it first: use that one.
        privateJwk = JSON.parse(readFileSync(path, 'utf8')) as JWK;
      }
    }
    const { d: _private, ...publicJwk } = privateJwk;
    return new BuiltInIssuer(BUILT_IN_ISSUER, privateJwk, { ...publicJwk, use: 'sig' });
  }

  jwks(): { keys: JWK[] } {
    return { keys: [this.#publicJwk] };
  }

  async sign(request: TokenRequest): Promise<string> {
    const key = await importJWK(this.#privateJwk, ALGORITHM);
    const email = request.email.trim().toLowerCase();
    const claims = {
      email,
      groups: request.admin ? [ADMIN_GROUP] : [],
      ...(request.secondFactor ? { amr: ['pwd', 'otp'] } : {}),
    };
    return new SignJWT(claims)
      .setProtectedHeader({ alg: ALGORITHM, kid: this.#privateJwk.kid ?? '' })
      .setIssuer(this.issuer)
      .setAudience(BUILT_IN_AUDIENCE)
      .setSubject(`local|${email}`)
      .setIssuedAt()
      .setExpirationTime(`${request.ttlSeconds ?? 12 * 3600}s`)
      .sign(key);
  }

  /** A one-time sign-in code for the dashboard (`replix start`, `replix login-link`). */
  async signLoginLink(request: { email: string; admin?: boolean }): Promise<string> {
    const key = await importJWK(this.#privateJwk, ALGORITHM);
    const email = request.email.trim().toLowerCase();
    return new SignJWT({ email, groups: request.admin ? [ADMIN_GROUP] : [] })
      .setProtectedHeader({ alg: ALGORITHM, kid: this.#privateJwk.kid ?? '' })
      .setIssuer(this.issuer)
      .setAudience(LOGIN_LINK_AUDIENCE)
      .setJti(randomUUID())
      .setIssuedAt()
      .setExpirationTime(`${LOGIN_LINK_TTL_SECONDS}s`)
      .sign(key);
  }

  /** The claims of a login link signed here and not expired; undefined for anything else. */
  async verifyLoginLink(code: string): Promise<LoginLinkClaims | undefined> {
    try {
      const key = await importJWK(this.#publicJwk, ALGORITHM);
      const { payload } = await jwtVerify(code, key, {
        issuer: this.issuer,
        audience: LOGIN_LINK_AUDIENCE,
        algorithms: [ALGORITHM],
      });
      if (typeof payload.email !== 'string' || typeof payload.jti !== 'string') return undefined;
      const groups = Array.isArray(payload.groups) ? payload.groups : [];
      return { email: payload.email, admin: groups.includes(ADMIN_GROUP), linkId: payload.jti };
    } catch {
      return undefined;
    }
  }
}
