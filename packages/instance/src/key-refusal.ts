import { type KeyScope, scopeGrants } from './api-keys.ts';
import { InstanceError } from './errors.ts';

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
