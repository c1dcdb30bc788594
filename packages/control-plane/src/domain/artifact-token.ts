import { Buffer } from 'node:buffer';
import { createHmac, timingSafeEqual } from 'node:crypto';

/**
 * The bearer token that lets an instance pod fetch one build's artifact from the control
 * plane (`GET /internal/artifacts/<buildId>/<file>`): an HMAC of the build id under the
 * control plane's secret key, so every process sharing the key issues and checks it with no
 * stored state, and a token opens exactly one build.
 */
export function artifactToken(secretKey: Buffer, buildId: string): string {
  const mac = createHmac('sha256', secretKey).update(`replix-artifact:${buildId}`, 'utf8');
  return `rxa_${mac.digest('base64url')}`;
}

/** Whether `presented` is the build's token (constant-time, whatever its length). */
export function artifactTokenMatches(
  secretKey: Buffer,
  buildId: string,
  presented: string,
): boolean {
  const expected = Buffer.from(artifactToken(secretKey, buildId), 'utf8');
  const given = Buffer.from(presented, 'utf8');
  // Compared at the expected length either way, so the time says nothing about the token.
  const padded = Buffer.alloc(expected.length);
  given.copy(padded, 0, 0, Math.min(given.length, expected.length));
  return timingSafeEqual(padded, expected) && given.length === expected.length;
}
