import { performance } from 'node:perf_hooks';
/**
 * Per-key rate limits (docs/limits.md, "Rate limits"): GCRA, the token bucket written as one
 * number per key, its theoretical arrival time (TAT). A key may send `quota` requests at once
 * and then one every `window / quota` seconds; a request that would push the TAT more than one
 * window ahead of now is refused.
 *
 * The TATs live in a `SharedArrayBuffer` shared by every query thread, one slot per key, and
 * change by compare-and-swap: a key's budget is the instance's, whichever thread its
 * connections land on. Slots are given out by the main thread (`assign`) as keys arrive and
 * sent to the query threads with the key ids (`adopt`), so a thread knows a key's slot before
 * it accepts the key.
 */

/** `quota` requests per `windowSeconds`, per key. */
export interface RateLimitPolicy {
  readonly quota: number;
  readonly windowSeconds: number;
}

/** What a thread needs to share the main thread's limiter (posted in `workerData`). */
export interface SharedRateLimits {
  readonly policy: RateLimitPolicy;
  /** Growable: the main thread grows it as keys arrive; length-tracking views follow. */
  readonly buffer: SharedArrayBuffer;
  readonly slots: Readonly<Record<string, number>>;
}

/** The answer to one request. */
export interface RateLimitDecision {
  readonly allowed: boolean;
  /** Requests the key may still send at once. */
  readonly remaining: number;
  /** Whole seconds until the key's full quota is back (refused: until the next request may go). */
  readonly resetSeconds: number;
}

/** Milliseconds on a clock all threads share (`performance.now()` alone is per thread). */
export type Clock = () => number;
const sharedClock: Clock = () => performance.timeOrigin + performance.now();

const SLOT_BYTES = BigInt64Array.BYTES_PER_ELEMENT;
const INITIAL_SLOTS = 256;
/** 8 MiB of TATs at most: a million keys, far past any database's. */
const MAX_SLOTS = 1 << 20;

export class RateLimiter {
  readonly policy: RateLimitPolicy;
  readonly #buffer: SharedArrayBuffer;
  /** Length-tracking: sees the buffer grow. Microseconds on `#now`'s clock. */
  readonly #tats: BigInt64Array;
  readonly #now: Clock;
  readonly #windowUs: number;
  readonly #intervalUs: number;
  #slots = new Map<string, number>();
  #free: number[] = [];
  #nextSlot = 0;

  constructor(
    policy: RateLimitPolicy,
    options: { readonly shared?: SharedRateLimits; readonly now?: Clock } = {},
  ) {
    if (!(Number.isInteger(policy.quota) && policy.quota >= 1)) {
      throw new RangeError('A rate limit quota is a whole number of requests, at least 1.');
    }
    if (!(Number.isInteger(policy.windowSeconds) && policy.windowSeconds >= 1)) {
      throw new RangeError('A rate limit window is a whole number of seconds, at least 1.');
    }
    this.policy = policy;
    this.#now = options.now ?? sharedClock;
    this.#windowUs = policy.windowSeconds * 1_000_000;
    this.#intervalUs = this.#windowUs / policy.quota;
    this.#buffer =
      options.shared?.buffer ??
      new SharedArrayBuffer(INITIAL_SLOTS * SLOT_BYTES, { maxByteLength: MAX_SLOTS * SLOT_BYTES });
    this.#tats = new BigInt64Array(this.#buffer);
    if (options.shared) this.adopt(options.shared.slots);
  }

  /** The limiter as a query thread takes it. */
  shared(): SharedRateLimits {
    return { policy: this.policy, buffer: this.#buffer, slots: this.slots() };
  }

  /** Each allowed key id's slot. */
  slots(): Record<string, number> {
    return Object.fromEntries(this.#slots);
  }

  /**
   * Main thread: gives each of `keyIds` a slot, keeping the slots of keys it had and freeing
   * those of keys gone. A slot given out afresh starts with the full quota.
   */
  assign(keyIds: Iterable<string>): Record<string, number> {
    const wanted = new Set(keyIds);
    const kept = new Map<string, number>();
    for (const [id, slot] of this.#slots) {
      if (wanted.has(id)) kept.set(id, slot);
      else this.#free.push(slot);
    }
    for (const id of wanted) {
      if (kept.has(id)) continue;
      const slot = this.#free.pop() ?? this.#newSlot();
      Atomics.store(this.#tats, slot, 0n);
      kept.set(id, slot);
    }
    this.#slots = kept;
    return this.slots();
  }

  /** Query thread: the slots the main thread gave out. */
  adopt(slots: Readonly<Record<string, number>>): void {
    this.#slots = new Map(Object.entries(slots));
  }

  #newSlot(): number {
    const slot = this.#nextSlot++;
    if (slot >= MAX_SLOTS) throw new RangeError(`More than ${MAX_SLOTS} keys to rate limit.`);
    const needed = (slot + 1) * SLOT_BYTES;
    if (needed > this.#buffer.byteLength) {
      this.#buffer.grow(Math.min(MAX_SLOTS * SLOT_BYTES, this.#buffer.byteLength * 2));
    }
    return slot;
  }

  /** Counts one request of `keyId` (a key without a slot is not limited: it is not allowed either). */
  take(keyId: string): RateLimitDecision {
    const slot = this.#slots.get(keyId);
    if (slot === undefined) return this.#decision(true, 0, 0);
    const now = this.#now() * 1000;
    for (;;) {
      const stored = Atomics.load(this.#tats, slot);
      const next = Math.max(Number(stored), now) + this.#intervalUs;
      const ahead = next - now;
      if (ahead > this.#windowUs) return this.#decision(false, 0, ahead - this.#windowUs);
      const swapped = Atomics.compareExchange(this.#tats, slot, stored, BigInt(Math.round(next)));
      if (swapped === stored) {
        // The epsilon keeps float error from taking one request off an exact quotient.
        const remaining = Math.floor((this.#windowUs - ahead) / this.#intervalUs + 1e-9);
        return this.#decision(true, remaining, ahead);
      }
    }
  }

  #decision(allowed: boolean, remaining: number, waitUs: number): RateLimitDecision {
    // Whole seconds, rounded up; a refused request waits at least one (Retry-After is whole).
    const seconds = Math.ceil(waitUs / 1_000_000 - 1e-9);
    return { allowed, remaining, resetSeconds: allowed ? seconds : Math.max(1, seconds) };
  }
}
