import { Buffer } from 'node:buffer';
import { createHash, randomInt, timingSafeEqual } from 'node:crypto';
import { Secret, TOTP } from 'otpauth';
import QRCode from 'qrcode';

/** The name authenticator apps show above the code. */
const TOTP_ISSUER = 'Replix';
const PERIOD_SECONDS = 30;
export const RECOVERY_CODE_COUNT = 10;

function totpFor(secretBase32: string, email: string): TOTP {
  // RFC 6238 defaults every authenticator app supports: SHA-1, 6 digits, 30 s.
  return new TOTP({
    issuer: TOTP_ISSUER,
    label: email,
    algorithm: 'SHA1',
    digits: 6,
    period: PERIOD_SECONDS,
    secret: Secret.fromBase32(secretBase32),
  });
}

/** A new 160-bit TOTP secret (RFC 4226's recommended length) with its enrolment URL and QR code. */
export async function newTotpEnrolment(
  email: string,
): Promise<{ secret: string; otpauthUrl: string; qrCodeSvg: string }> {
  const secret = new Secret({ size: 20 }).base32;
  const otpauthUrl = totpFor(secret, email).toString();
  const qrCodeSvg = await QRCode.toString(otpauthUrl, { type: 'svg', errorCorrectionLevel: 'M' });
  return { secret, otpauthUrl, qrCodeSvg };
}

/**
 * The time step a code is valid for (one step of clock drift either way), or undefined. The
 * caller refuses steps at or before the last one used, so a code works once.
 */
export function totpStep(secretBase32: string, code: string, now = Date.now()): number | undefined {
  const token = code.replace(/\s/g, '');
  if (!/^\d{6}$/.test(token)) return undefined;
  const delta = totpFor(secretBase32, 'user').validate({ token, timestamp: now, window: 1 });
  if (delta === null) return undefined;
  return Math.floor(now / 1000 / PERIOD_SECONDS) + delta;
}

const RECOVERY_ALPHABET = 'abcdefghjkmnpqrstuvwxyz23456789';

/** Ten one-time recovery codes like `k7pq2-xm4rt` (about 49 bits each); only hashes are kept. */
export function newRecoveryCodes(): string[] {
  return Array.from({ length: RECOVERY_CODE_COUNT }, () => {
    const chars = Array.from(
      { length: 10 },
      () => RECOVERY_ALPHABET[randomInt(RECOVERY_ALPHABET.length)],
    );
    return `${chars.slice(0, 5).join('')}-${chars.slice(5).join('')}`;
  });
}

/** Recovery codes are compared without case, spaces or dashes. */
export function hashRecoveryCode(code: string): string {
  const normalised = code.toLowerCase().replace(/[\s-]/g, '');
  return createHash('sha256').update(normalised).digest('hex');
}

export function sameHash(a: string, b: string): boolean {
  const left = Buffer.from(a, 'hex');
  const right = Buffer.from(b, 'hex');
  return left.length === right.length && timingSafeEqual(left, right);
}
