import { recordAudit } from '../../../adapters/events/audit-log.ts';
import {
  disableTotp,
  enableTotp,
  lockTotpState,
  replaceRecoveryCodes,
  startTotpEnrolment,
} from '../../../adapters/store/second-factor-store.ts';
import type { ApiContext } from '../../../api/context.ts';
import { ApiError } from '../../../domain/errors.ts';
import type { BuiltInIssuer } from '../../identity/built-in-issuer.ts';
import type { Principal } from '../../identity/principal.ts';
import { checkSecondFactor, type SecondFactorProof } from '../../identity/second-factor.ts';
import { hashRecoveryCode, newRecoveryCodes, newTotpEnrolment } from '../../identity/totp.ts';
import { iso } from '../common-schemas.ts';
import { recoveryCodesLeft, redeemLink, twoFactorColumns } from './auth-queries.ts';

export type AuthDeps = Pick<ApiContext, 'db' | 'secrets' | 'issuer' | 'verifyToken'>;

/** The caller as a 2FA operation needs them, with the `Authorization` header they came with. */
export interface Caller {
  readonly principal: Principal;
  readonly authorization: string | undefined;
}

/** How long a token from a login link is valid. */
const SIGN_IN_TTL_SECONDS = 12 * 3600;

/** The built-in issuer, or 409: with an external OIDC provider the built-in 2FA does not apply. */
function builtInIssuer({ issuer }: AuthDeps): BuiltInIssuer {
  if (!issuer) {
    throw new ApiError(
      'conflict',
      'Tokens come from an external identity provider here; two-factor authentication is configured there.',
    );
  }
  return issuer;
}

/** Second-factor operations are for people signing in, not for management keys. */
function assertSignInToken(principal: Principal): void {
  if (principal.via !== 'token') {
    throw new ApiError('forbidden', 'Use a sign-in token for two-factor authentication.');
  }
}

function exactlyOne(proof: SecondFactorProof): SecondFactorProof {
  if ((proof.code === undefined) === (proof.recoveryCode === undefined)) {
    throw new ApiError('validation_failed', 'body needs exactly one of code and recoveryCode.');
  }
  return proof;
}

/**
 * A token like the caller's, now carrying the second factor. It expires when the caller's token
 * does, so the exchange never lengthens a sign-in.
 */
async function secondFactorToken(
  deps: AuthDeps,
  issuer: BuiltInIssuer,
  { principal, authorization }: Caller,
): Promise<{ token: string; expiresAt: string }> {
  const bearer = /^Bearer\s+(\S+)$/i.exec(authorization ?? '')?.[1] ?? '';
  const identity = await deps.verifyToken(bearer);
  const expiresAt = identity?.expiresAt ?? new Date(Date.now() + 12 * 3600 * 1000);
  const ttlSeconds = Math.max(1, Math.floor((expiresAt.getTime() - Date.now()) / 1000));
  const token = await issuer.sign({
    email: principal.email,
    admin: principal.admin,
    ttlSeconds,
    secondFactor: true,
  });
  return { token, expiresAt: new Date(Date.now() + ttlSeconds * 1000).toISOString() };
}

export async function twoFactorStatus(deps: AuthDeps, userId: string) {
  const user = await twoFactorColumns(deps.db, userId);
  const left = await recoveryCodesLeft(deps.db, userId);
  return {
    available: deps.issuer !== undefined,
    enabled: user.totp_enabled_at !== null,
    enabledAt: iso(user.totp_enabled_at),
    pending: user.totp_pending_enc !== null,
    recoveryCodesLeft: user.totp_enabled_at ? left : 0,
  };
}

/** A new TOTP secret (sealed in the store) and its QR code, pending until confirmed. */
export async function startEnrolment(deps: AuthDeps, principal: Principal) {
  builtInIssuer(deps);
  assertSignInToken(principal);
  const { userId, accountId, email } = principal;
  const enrolment = await newTotpEnrolment(email);
  await deps.db.transaction().execute(async (tx) => {
    if (!(await startTotpEnrolment(tx, userId, deps.secrets.seal(enrolment.secret)))) {
      throw new ApiError(
        'conflict',
        'Two-factor authentication is already on; disable it first to enrol a new device.',
      );
    }
    await recordAudit(tx, {
      accountId,
      entityType: 'user',
      entityId: userId,
      eventType: 'two_factor.enrollment_started',
    });
  });
  return enrolment;
}

/** Turns 2FA on with a code of the pending secret; answers recovery codes and a 2FA token. */
export async function confirmEnrolment(deps: AuthDeps, caller: Caller, code: string) {
  const issuer = builtInIssuer(deps);
  assertSignInToken(caller.principal);
  const { db, secrets } = deps;
  const { userId, accountId } = caller.principal;
  await checkSecondFactor(db, secrets, userId, { code }, 'pending');
  const recoveryCodes = newRecoveryCodes();
  await db.transaction().execute(async (tx) => {
    const { totp_pending_enc: pending } = await lockTotpState(tx, userId);
    if (!pending) {
      throw new ApiError('conflict', 'The enrolment was confirmed or replaced meanwhile.');
    }
    await enableTotp(tx, userId, pending);
    await replaceRecoveryCodes(tx, userId, recoveryCodes.map(hashRecoveryCode));
    await recordAudit(tx, {
      accountId,
      entityType: 'user',
      entityId: userId,
      eventType: 'two_factor.enabled',
    });
  });
  // The code just proved the second factor: the caller need not wait for the next one.
  return { recoveryCodes, ...(await secondFactorToken(deps, issuer, caller)) };
}

/** Turns 2FA off, given a current code or a recovery code. */
export async function disableTwoFactor(
  deps: AuthDeps,
  principal: Principal,
  proof: SecondFactorProof,
): Promise<void> {
  builtInIssuer(deps);
  assertSignInToken(principal);
  const { db, secrets } = deps;
  const { userId, accountId } = principal;
  const { method } = await checkSecondFactor(db, secrets, userId, exactlyOne(proof), 'enabled');
  await db.transaction().execute(async (tx) => {
    await disableTotp(tx, userId);
    await recordAudit(tx, {
      accountId,
      entityType: 'user',
      entityId: userId,
      eventType: 'two_factor.disabled',
      payload: { method },
    });
  });
}

/** Exchanges a first-factor token and a code (or recovery code) for a 2FA token. */
export async function verifySecondFactor(deps: AuthDeps, caller: Caller, proof: SecondFactorProof) {
  const issuer = builtInIssuer(deps);
  assertSignInToken(caller.principal);
  const { db, secrets } = deps;
  const { userId, accountId } = caller.principal;
  const { method } = await checkSecondFactor(db, secrets, userId, exactlyOne(proof), 'enabled');
  await recordAudit(db, {
    accountId,
    entityType: 'user',
    entityId: userId,
    eventType: 'two_factor.verified',
    payload: { method },
  });
  return secondFactorToken(deps, issuer, caller);
}

/** Exchanges a one-time login link for a bearer token; a link works once. */
export async function redeemLoginLink(deps: AuthDeps, code: string) {
  const issuer = builtInIssuer(deps);
  const link = await issuer.verifyLoginLink(code);
  const redeemed = link ? await redeemLink(deps.db, link.linkId) : false;
  if (!link || !redeemed) {
    throw new ApiError(
      'not_found',
      'This login link is unknown, expired or already used. Ask for a new one: npx replix login-link --email <you>.',
    );
  }
  const ttlSeconds = SIGN_IN_TTL_SECONDS;
  const token = await issuer.sign({ email: link.email, admin: link.admin, ttlSeconds });
  return {
    linkId: link.linkId,
    token,
    expiresAt: new Date(Date.now() + ttlSeconds * 1000).toISOString(),
  };
}
