import { AsyncLocalStorage } from 'node:async_hooks';

/**
 * The request a process is serving, for its log lines: a Fastify app enters it in its first
 * hook (`runWithRequestId`), and every line written until the answer, by the request's logger
 * or by any other, carries its id (`service-logger.ts`'s mixin). Only the control plane's API
 * enters it; the instance's query path does not pay for a store per request.
 */
const requestIds = new AsyncLocalStorage<string>();

/** Runs `fn` (a Fastify hook's `done`, so the rest of the request inherits it) as serving `id`. */
export function runWithRequestId(id: string, fn: () => void): void {
  requestIds.run(id, fn);
}

/** The id of the request being served here, if any. */
export function currentRequestId(): string | undefined {
  return requestIds.getStore();
}

/**
 * An incoming `X-Request-Id` a server may keep as its own: short, of letters, digits, `-` and
 * `_`, so it cannot forge log fields or fill a line; anything else is replaced by a fresh id.
 */
export function wellFormedRequestId(given: unknown): given is string {
  return typeof given === 'string' && /^[\w-]{1,64}$/.test(given);
}
