import { InstanceError } from './errors.ts';

/** A query's place among the running ones; give it back with `release()` when it is done. */
export interface Admission {
  /** Frees the query's slot and working memory and admits the next waiters. Idempotent. */
  release(): void;
}

export interface QueryAdmissionOptions {
  /** Queries that may run at the same time. */
  readonly maxConcurrent: number;
  /** Queries that may wait for a slot; one more is refused with `too_many_requests`. */
  readonly maxQueued: number;
  /** The bytes queries may hold in total right now (it shrinks as the snapshot grows). */
  readonly workingMemoryBytes: () => number;
}

interface Waiter {
  readonly bytes: number;
  readonly admit: () => void;
}

/**
 * The gate every query passes before it runs: at most `maxConcurrent` at once, and together
 * no more working memory (their estimated bytes) than the instance has for queries. Others
 * wait in arrival order, at most `maxQueued` of them, so a cheap query cannot overtake a big
 * one forever and no client can pile up unbounded work. A query estimated bigger than the
 * whole working memory still runs, alone, rather than waiting for memory that never comes.
 */
export class QueryAdmission {
  readonly #options: QueryAdmissionOptions;
  readonly #queue: Waiter[] = [];
  #running = 0;
  #inFlightBytes = 0;

  constructor(options: QueryAdmissionOptions) {
    if (!Number.isInteger(options.maxConcurrent) || options.maxConcurrent < 1)
      throw new RangeError('maxConcurrent must be an integer of at least 1.');
    if (!Number.isInteger(options.maxQueued) || options.maxQueued < 0)
      throw new RangeError('maxQueued must be an integer of at least 0.');
    this.#options = options;
  }

  /** Estimated bytes held by the queries running now. */
  get inFlightBytes(): number {
    return this.#inFlightBytes;
  }

  /** Queries running now. */
  get running(): number {
    return this.#running;
  }

  /** Queries waiting for a slot. */
  get queued(): number {
    return this.#queue.length;
  }

  /**
   * Admits the query now when it fits with nobody waiting ahead of it, else null (then
   * `acquire` queues it): the common case costs no promise, timer or abort listener.
   */
  tryAcquire(bytes: number): Admission | null {
    const size = Number.isFinite(bytes) && bytes > 0 ? bytes : 0;
    return this.#queue.length === 0 && this.#fits(size) ? this.#admit(size) : null;
  }

  /**
   * Resolves when the query may run. Rejects with `too_many_requests` when the queue is full,
   * and with the signal's reason when it aborts first (the query leaves the queue).
   */
  acquire(bytes: number, signal: AbortSignal): Promise<Admission> {
    const size = Number.isFinite(bytes) && bytes > 0 ? bytes : 0;
    if (signal.aborted) return Promise.reject(signal.reason);
    if (this.#queue.length === 0 && this.#fits(size)) return Promise.resolve(this.#admit(size));
    if (this.#queue.length >= this.#options.maxQueued) {
      return Promise.reject(
        new InstanceError(
          'too_many_requests',
          `This instance is running ${this.#running} queries and has ${this.#queue.length} waiting, its limit; retry shortly.`,
        ),
      );
    }
    return new Promise<Admission>((resolve, reject) => {
      const onAbort = () => {
        const index = this.#queue.indexOf(waiter);
        if (index >= 0) this.#queue.splice(index, 1);
        reject(signal.reason);
        // The query that left may have been the one holding up those behind it.
        this.#admitWaiters();
      };
      const waiter: Waiter = {
        bytes: size,
        admit: () => {
          signal.removeEventListener('abort', onAbort);
          resolve(this.#admit(size));
        },
      };
      signal.addEventListener('abort', onAbort, { once: true });
      this.#queue.push(waiter);
    });
  }

  #fits(bytes: number): boolean {
    if (this.#running >= this.#options.maxConcurrent) return false;
    // Alone, any query runs: waiting would not make more memory appear.
    if (this.#running === 0) return true;
    return this.#inFlightBytes + bytes <= this.#options.workingMemoryBytes();
  }

  #admit(bytes: number): Admission {
    this.#running += 1;
    this.#inFlightBytes += bytes;
    let released = false;
    return {
      release: () => {
        if (released) return;
        released = true;
        this.#running -= 1;
        this.#inFlightBytes -= bytes;
        this.#admitWaiters();
      },
    };
  }

  /** Admits waiters from the front while they fit; strict order, so the first is never starved. */
  #admitWaiters(): void {
    while (this.#queue.length > 0) {
      const next = this.#queue[0] as Waiter;
      if (!this.#fits(next.bytes)) return;
      this.#queue.shift();
      next.admit();
    }
  }
}
