import type { StoreDb } from '../../adapters/store/open-store.ts';
import {
  lockTotpState,
  recentFailures,
  recordFailure,
  recordTotpStep,
  unusedRecoveryCodes,
  useRecoveryCode,
} from '../../adapters/store/second-factor-store.ts';
import type { SecretBox } from '../../adapters/store/secret-box.ts';
import { ApiError } from '../../domain/errors.ts';
import { hashRecoveryCode, sameHash, totpStep } from './totp.ts';

/** Wrong codes allowed per user in the window before every attempt is refused. */
export const MAX_SECOND_FACTOR_FAILURES = 5;
export const SECOND_FACTOR_WINDOW_MS = 15 * 60 * 1000;

export interface SecondFactorProof {
  readonly code?: string | undefined;
  readonly recoveryCode?: string | undefined;
}

/** Which secret a code is checked against: the confirmed one, or one being enrolled. */
export type SecretKind = 'enabled' | 'pending';

/**
 * Checks a TOTP code (or, against the enabled secret, a one-time recovery code) for a user, with
 * the user's row locked so concurrent attempts are counted one after another. A success uses the
 * code up (the TOTP step is remembered, the recovery code marked used); a failure is recorded in
 * the same committed transaction, then reported. After 5 failures in 15 minutes every attempt,
 * right or wrong, answers 429 `too_many_attempts` until the oldest failure leaves the window.
 */
export async function checkSecondFactor(
  db: StoreDb,
  secrets: SecretBox,
  userId: string,
  proof: SecondFactorProof,
  kind: SecretKind,
): Promise<{ method: 'totp' | 'recovery_code' }> {
  const now = new Date();
  const outcome = await db.transaction().execute(async (tx) => {
    const user = await lockTotpState(tx, userId);
    const failures = await recentFailures(
      tx,
      userId,
      new Date(now.getTime() - SECOND_FACTOR_WINDOW_MS),
    );
    if (failures >= MAX_SECOND_FACTOR_FAILURES) return 'limited' as const;
    const sealed = kind === 'enabled' ? user.totp_secret_enc : user.totp_pending_enc;
    if (!sealed) return 'no_secret' as const;
    if (proof.code !== undefined) {
      const step = totpStep(secrets.open(sealed), proof.code, now.getTime());
      const lastStep = user.totp_last_step === null ? -1 : Number(user.totp_last_step);
      if (step !== undefined && step > lastStep) {
        await recordTotpStep(tx, userId, step);
        return 'totp' as const;
      }
    } else if (proof.recoveryCode !== undefined && kind === 'enabled') {
      const hash = hashRecoveryCode(proof.recoveryCode);
      const unused = await unusedRecoveryCodes(tx, userId);
      const match = unused.find((row) => sameHash(row.code_hash, hash));
      if (match) {
        await useRecoveryCode(tx, match.id, now);
        return 'recovery_code' as const;
      }
    }
    await recordFailure(tx, userId, now);
    return 'wrong' as const;
  });
  switch (outcome) {
    case 'totp':
    case 'recovery_code':
      return { method: outcome };
    case 'limited':
      throw new ApiError('too_many_attempts', 'Too many wrong codes: try again in 15 minutes.');
    case 'no_secret':
      throw new ApiError(
        'conflict',
        kind === 'enabled'
          ? 'Two-factor authentication is not on for this user.'
          : 'There is no enrolment to confirm; start one with POST /v1/auth/2fa/enroll.',
      );
    default:
      throw new ApiError(
        'validation_failed',
        proof.code !== undefined
          ? 'The code is wrong, expired or already used.'
          : 'The recovery code is wrong or already used.',
      );
  }
}
