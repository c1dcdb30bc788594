/** How long a live query waits before it reconnects (`LiveQueryOptions.retry`). */
export interface ReconnectPolicy {
  /** The first wait when the instance advised none (no `retry:` field, no Retry-After). */
  readonly baseDelayMs: number;
  /** The longest wait, whatever the backoff or the instance's advice. */
  readonly maxDelayMs: number;
}

export const DEFAULT_RECONNECT_POLICY: ReconnectPolicy = { baseDelayMs: 1000, maxDelayMs: 30_000 };

/** The least a backoff starts from: an instance advising 0 must not make a reconnect loop spin. */
const MIN_BASE_MS = 100;

/**
 * The waits between a live query's reconnects: exponential backoff from the delay the instance
 * advised last (its stream's `retry:` field, or a refusal's Retry-After), doubling with each
 * failure since the last result, with up to half again of jitter so that subscribers cut off
 * together do not come back together, and never longer than `maxDelayMs`.
 */
export class ReconnectBackoff {
  readonly #policy: ReconnectPolicy;
  readonly #random: () => number;
  #advisedMs: number;
  #failures = 0;

  constructor(policy: Partial<ReconnectPolicy> = {}, random: () => number = Math.random) {
    const resolved = { ...DEFAULT_RECONNECT_POLICY, ...policy };
    for (const [name, value] of Object.entries(resolved)) {
      if (!Number.isFinite(value) || value < 0) {
        throw new TypeError(
          `subscribe: retry.${name} must be a number of milliseconds, 0 or more.`,
        );
      }
    }
    this.#policy = resolved;
    this.#random = random;
    this.#advisedMs = resolved.baseDelayMs;
  }

  /** Reconnects since the last result (or long-lived stream): 1 for the first. */
  get attempt(): number {
    return this.#failures;
  }

  /** The instance's advice, which later waits start from. */
  advise(ms: number): void {
    this.#advisedMs = ms;
  }

  /** The wait before the next reconnect, counted as one more failure. */
  next(): number {
    const base = Math.max(this.#advisedMs, MIN_BASE_MS) * 2 ** Math.min(this.#failures, 20);
    this.#failures += 1;
    return Math.round(Math.min(this.#policy.maxDelayMs, base * (1 + this.#random() / 2)));
  }

  /** A result arrived, or a stream lasted: the next failure waits the advised delay again. */
  reset(): void {
    this.#failures = 0;
  }

  /** A stream open this long counts as a success, though no result came (nothing changed). */
  get healthyAfterMs(): number {
    return this.#policy.maxDelayMs;
  }
}
