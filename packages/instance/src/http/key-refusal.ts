import type { KeyScope } from '@replix/instance-protocol';
import { InstanceError } from '../errors.ts';
import { scopeGrants, type VerifiedKey } from './api-keys.ts';
import { type HeaderTarget, rateLimitCheck } from './rate-limit-check.ts';
import type { RateLimiter } from './rate-limiter.ts';

/** Why a request holding a key of scope `held` (null: no valid key) may not call a route. */
export function keyRefusal(held: KeyScope | null, needed: KeyScope): InstanceError | null {
  if (!held) {
    return new InstanceError(
      'unauthorized',
      'A valid API key is required: Authorization: Bearer rxk_<keyId>.<hmac>.',
    );
  }
  if (!scopeGrants(held, needed)) {
    return new InstanceError(
      'forbidden',
      'This endpoint needs an admin key; the key given is a query key, which may only query and read the schema.',
    );
  }
  return null;
}

/**
 * The check of a route that needs a key of scope `needed`, for the key a request holds (null:
 * none valid): its scope, then, on the query routes, its rate limit, whose fields go on
 * `target`. The refusal to answer, or null. Rate limits count the query routes' requests, by
 * key whatever its scope; admin routes (the control plane's health, metrics and actions) are
 * not counted.
 */
export function keyCheckFor(
  needed: KeyScope,
  limiter: RateLimiter | undefined,
): (key: VerifiedKey | null, target: HeaderTarget) => InstanceError | null {
  const rateLimited = limiter !== undefined && needed === 'query' ? rateLimitCheck(limiter) : null;
  return (key, target) =>
    keyRefusal(key?.scope ?? null, needed) ??
    (rateLimited && key ? rateLimited(key.keyId, target) : null);
}
