import { randomUUID } from 'node:crypto';
import { mkdirSync, readFileSync, writeFileSync } from 'node:fs';
import { dirname, join } from 'node:path';
import { exportJWK, generateKeyPair, importJWK, type JWK, SignJWT } from 'jose';
import { BUILT_IN_AUDIENCE } from '../config.ts';

export const ADMIN_GROUP = 'service-admins';
/** The built-in issuer's `iss`: fixed, so tokens survive a change of port or address. */
export const BUILT_IN_ISSUER = 'urn:replix:built-in-issuer';
const ALGORITHM = 'ES256';

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

  /** Loads the signing key from the data folder, making it on first use. */
  static async open(dataDir: string): Promise<BuiltInIssuer> {
    const path = join(dataDir, 'issuer', 'signing-key.json');
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
}
