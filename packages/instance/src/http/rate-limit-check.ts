import { InstanceError } from '../errors.ts';
import type { RateLimitDecision, RateLimiter, RateLimitPolicy } from './rate-limiter.ts';

/**
 * The fields of draft-ietf-httpapi-ratelimit-headers-10 (structured fields, RFC 9651): the
 * policy a key is under, `RateLimit-Policy: "default";q=<quota>;w=<window seconds>`, and where
 * the key stands in it, `RateLimit: "default";r=<remaining>;t=<seconds to reset>`.
 */
const POLICY_NAME = 'default';

export function rateLimitPolicyField(policy: RateLimitPolicy): string {
  return `"${POLICY_NAME}";q=${policy.quota};w=${policy.windowSeconds}`;
}

export function rateLimitField(decision: RateLimitDecision): string {
  return `"${POLICY_NAME}";r=${decision.remaining};t=${decision.resetSeconds}`;
}

/**
 * The rate-limit check of one limiter: counts a request of `keyId` and writes the fields on its
 * reply (kept on an error's answer too); returns the 429 to answer when the key is over its
 * limit. The policy's field never changes: written once, not per request.
 */
/** What the fields are written on: a Fastify reply, or a query exchange (names in lowercase). */
export interface HeaderTarget {
  header(name: string, value: string): unknown;
}

export function rateLimitCheck(
  limiter: RateLimiter,
): (keyId: string, reply: HeaderTarget) => InstanceError | null {
  const policyField = rateLimitPolicyField(limiter.policy);
  const { quota, windowSeconds } = limiter.policy;
  return (keyId, reply) => {
    const decision = limiter.take(keyId);
    reply.header('ratelimit-policy', policyField);
    reply.header('ratelimit', rateLimitField(decision));
    if (decision.allowed) return null;
    reply.header('retry-after', String(decision.resetSeconds));
    return new InstanceError(
      'too_many_requests',
      `This API key is over its rate limit of ${quota} requests per ${windowSeconds} s; retry after ${decision.resetSeconds} s (Retry-After).`,
    );
  };
}
