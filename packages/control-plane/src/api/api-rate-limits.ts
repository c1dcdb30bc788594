import rateLimit from '@fastify/rate-limit';
import type { FastifyReply, FastifyRequest } from 'fastify';
import { ApiError } from '../domain/errors.ts';
import type { ApiServer } from './api-server.ts';
import type { ApiRateLimitSettings } from './rate-limit-settings.ts';

/**
 * The `/v1` rate limits (docs/control-plane/README.md, "Rate limits"), counted by
 * @fastify/rate-limit's in-memory store: per credential and per account once the auth hook has
 * verified who calls, so the keys are the verified principal's and never a header a caller
 * picks; per client address for requests without a valid credential (sign-in, a wrong token,
 * an unknown route). The plugin's own `x-ratelimit-*` fields are not used: the answer carries
 * the fields instances send (draft-ietf-httpapi-ratelimit-headers, as
 * `instance/src/http/rate-limit-check.ts` writes them), one list item per limit that counted
 * the request, and a refusal is the API's envelope with `too_many_requests`.
 */

/** One limit's count of a request, as the plugin's limiter reports it. */
interface Count {
  readonly name: 'credential' | 'account' | 'address';
  readonly quota: number;
  readonly remaining: number;
  readonly resetSeconds: number;
  readonly exceeded: boolean;
}

type Limiter = (request: FastifyRequest) => Promise<Count>;

/** Only the API proper: not the probes, `/metrics`, the dashboard's files or artifact downloads. */
function isLimited(request: FastifyRequest): boolean {
  const path = request.url;
  return path.startsWith('/v1') && (path.length === 3 || path[3] === '/' || path[3] === '?');
}

/** `RateLimit-Policy` of the limits that counted a request; the instances' syntax. */
export function rateLimitPolicyField(counts: readonly Count[], windowSeconds: number): string {
  return counts.map((count) => `"${count.name}";q=${count.quota};w=${windowSeconds}`).join(', ');
}

/** `RateLimit`: where the request's keys stand in each limit. */
export function rateLimitField(counts: readonly Count[]): string {
  return counts
    .map((count) => `"${count.name}";r=${count.remaining};t=${count.resetSeconds}`)
    .join(', ');
}

const REFUSALS: Record<Count['name'], string> = {
  credential: 'This credential is over its rate limit',
  account: "This account's credentials together are over the account's rate limit",
  address: 'Requests without a valid credential from this address are over their rate limit',
};

/**
 * Registers the plugin (no route limited by it directly) and returns the check the auth hook
 * calls: counts the request in its limits, writes the fields on the reply and throws the 429
 * when a limit is exceeded.
 */
export async function registerApiRateLimits(
  app: ApiServer,
  settings: ApiRateLimitSettings,
): Promise<(request: FastifyRequest, reply: FastifyReply) => Promise<void>> {
  await app.register(rateLimit, { global: false });
  const timeWindow = settings.windowSeconds * 1000;

  function limiter(
    name: Count['name'],
    max: number,
    keyOf: (request: FastifyRequest) => string,
  ): Limiter {
    const take = app.createRateLimit({ max, timeWindow, keyGenerator: keyOf });
    return async (request) => {
      const result = await take(request);
      if (result.isAllowed) throw new Error('No /v1 rate limit has an allow list.');
      return {
        name,
        quota: max,
        remaining: result.remaining,
        // The window of a key's first request: reported as at least 1 s while it runs.
        resetSeconds: Math.max(1, result.ttlInSeconds),
        exceeded: result.isExceeded,
      };
    };
  }

  // A user's tokens count as one credential: signing in again must not buy a fresh quota.
  const byCredential = limiter('credential', settings.perCredential, (request) =>
    request.principal.managementKey
      ? `key:${request.principal.managementKey.id}`
      : `user:${request.principal.userId}`,
  );
  const byAccount = limiter(
    'account',
    settings.perAccount,
    (request) => `account:${request.principal.accountId}`,
  );
  // An IPv6 client holds a whole /64: counted as one address, as the plugin's own key does.
  const byAddress = limiter(
    'address',
    settings.perAddress,
    (request) => `address:${rateLimit.normalizeIP(request.ip)}`,
  );

  return async (request, reply) => {
    if (!isLimited(request)) return;
    const counts = request.principal
      ? [await byCredential(request), await byAccount(request)]
      : [await byAddress(request)];
    reply.header('ratelimit-policy', rateLimitPolicyField(counts, settings.windowSeconds));
    reply.header('ratelimit', rateLimitField(counts));
    const over = counts.filter((count) => count.exceeded);
    if (over.length === 0) return;
    const retryAfter = Math.max(...over.map((count) => count.resetSeconds));
    reply.header('retry-after', String(retryAfter));
    const which = over[0] as Count;
    throw new ApiError(
      'too_many_requests',
      `${REFUSALS[which.name]} of ${which.quota} requests per ${settings.windowSeconds} s; retry after ${retryAfter} s (Retry-After).`,
    );
  };
}
