import { createHash, randomBytes } from 'node:crypto';

export const INVITATION_TOKEN_PREFIX = 'rti_';
/** How long an invitation can be accepted. */
export const INVITATION_LIFETIME_MS = 7 * 24 * 3600 * 1000;

/** A new invitation token: `rti_` and 32 random bytes in base64url. Only its hash is stored. */
export function newInvitationToken(): { token: string; hash: string } {
  const token = `${INVITATION_TOKEN_PREFIX}${randomBytes(32).toString('base64url')}`;
  return { token, hash: hashInvitationToken(token) };
}

export function hashInvitationToken(token: string): string {
  return createHash('sha256').update(token).digest('hex');
}
