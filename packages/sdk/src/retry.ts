/** When to ask again after a 429 or 503, and the wait itself. */

export interface RetryPolicy {
  /** Retries after the first attempt; 0 turns retrying off. */
  readonly retries: number;
  /** The first backoff; each next one doubles, with jitter. */
  readonly baseDelayMs: number;
  /** The longest wait; an answer asking for longer (Retry-After) is not retried. */
  readonly maxDelayMs: number;
}

export const DEFAULT_RETRY_POLICY: RetryPolicy = {
  retries: 3,
  baseDelayMs: 250,
  maxDelayMs: 10_000,
};

/** The statuses that mean "not now": too many queries, or no instance serving yet. */
export function isRetryableStatus(status: number): boolean {
  return status === 429 || status === 503;
}

/** Retry-After in milliseconds: delay-seconds or an HTTP date; undefined when absent or bad. */
export function retryAfterMs(header: string | null, now: number = Date.now()): number | undefined {
  if (header === null) return undefined;
  const text = header.trim();
  if (/^[0-9]+$/.test(text)) return Number(text) * 1000;
  // An HTTP date names its day and month; Date.parse alone would also take '-1'.
  const date = /[A-Za-z]{3}/.test(text) ? Date.parse(text) : Number.NaN;
  return Number.isNaN(date) ? undefined : Math.max(0, date - now);
}

/**
 * The wait before retry number `attempt` (0 for the first): what the server asked for, else
 * exponential backoff with jitter so that many clients refused together do not return together.
 * Undefined when the wait would be longer than the policy allows.
 */
export function retryDelay(
  policy: RetryPolicy,
  attempt: number,
  askedMs: number | undefined,
  random: () => number = Math.random,
): number | undefined {
  if (attempt >= policy.retries) return undefined;
  if (askedMs !== undefined) return askedMs <= policy.maxDelayMs ? askedMs : undefined;
  const backoff = Math.min(policy.maxDelayMs, policy.baseDelayMs * 2 ** attempt);
  return Math.round(backoff * (0.5 + random() / 2));
}

/** Waits `ms`, or rejects with the signal's reason as soon as it aborts. */
export function sleep(ms: number, signal?: AbortSignal): Promise<void> {
  return new Promise((resolve, reject) => {
    if (signal?.aborted) {
      reject(signal.reason);
      return;
    }
    const onAbort = () => {
      clearTimeout(timer);
      reject(signal?.reason);
    };
    const timer = setTimeout(() => {
      signal?.removeEventListener('abort', onAbort);
      resolve();
    }, ms);
    signal?.addEventListener('abort', onAbort, { once: true });
  });
}
