import { InstanceError } from '../errors.ts';

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
  /** Queries of one key that may wait for a slot (`maxQueued` unless given). */
  readonly maxQueuedPerKey?: number;
  /**
   * Queries of one key that may run at once (`maxConcurrent` unless given): below it, the
   * slots one key cannot take are there for other keys' queries the moment they come.
   */
  readonly maxRunningPerKey?: number;
  /** The bytes queries may hold in total right now (it shrinks as the snapshot grows). */
  readonly workingMemoryBytes: () => number;
}

/** Keys with no query running are dropped from the count once there are more than this. */
const IDLE_KEYS_SWEPT_AT = 1024;

/** One admitted query: an object, not a closure per query. */
class Admitted implements Admission {
  readonly #gate: QueryAdmission;
  readonly #bytes: number;
  readonly #key: string;
  #released = false;

  constructor(gate: QueryAdmission, bytes: number, key: string) {
    this.#gate = gate;
    this.#bytes = bytes;
    this.#key = key;
  }

  release(): void {
    if (this.#released) return;
    this.#released = true;
    this.#gate.returnAdmission(this.#bytes, this.#key);
  }
}

/** What one key's running queries hold. */
interface KeyHolding {
  running: number;
  bytes: number;
}

interface Waiter {
  readonly bytes: number;
  readonly admit: () => void;
}

/**
 * The gate every query passes before it runs: at most `maxConcurrent` at once, and together
 * no more working memory (their estimated bytes) than the instance has for queries. Others
 * wait, at most `maxQueued` of them and `maxQueuedPerKey` of one key, so no client can pile up
 * unbounded work. Waiters queue per key, each key's in arrival order, and the keys take turns
 * (round robin): one key's burst delays that key's own queries, and another key's waits for
 * one query of each key ahead of it at most. The key whose turn it is waits until its query
 * fits, holding up the others meanwhile, so a big query is never starved by small ones. One
 * key's queries hold at most `maxRunningPerKey` slots and the same share of the working memory
 * (a key at either bound lets the next keys' waiters in), so another key's query finds room at
 * once however long one key's burst runs. A query estimated bigger than the whole working
 * memory still runs, alone, rather than waiting for memory that never comes.
 */
export class QueryAdmission {
  readonly #options: QueryAdmissionOptions;
  readonly #maxQueuedPerKey: number;
  readonly #maxRunningPerKey: number;
  /** The share of working memory one key's queries may hold: as of the running slots. */
  readonly #keyShare: number;
  /** What each key's queries hold now (a key with none may stay, at zero; see `returnAdmission`). */
  readonly #byKey = new Map<string, KeyHolding>();
  /** Keys with waiters in the order of their next turn (a Map keeps insertion order). */
  readonly #queues = new Map<string, Waiter[]>();
  #queued = 0;
  #running = 0;
  #inFlightBytes = 0;

  constructor(options: QueryAdmissionOptions) {
    if (!Number.isInteger(options.maxConcurrent) || options.maxConcurrent < 1)
      throw new RangeError('maxConcurrent must be an integer of at least 1.');
    if (!Number.isInteger(options.maxQueued) || options.maxQueued < 0)
      throw new RangeError('maxQueued must be an integer of at least 0.');
    const perKey = options.maxQueuedPerKey ?? options.maxQueued;
    if (!Number.isInteger(perKey) || perKey < 0)
      throw new RangeError('maxQueuedPerKey must be an integer of at least 0.');
    const runningPerKey = options.maxRunningPerKey ?? options.maxConcurrent;
    if (!Number.isInteger(runningPerKey) || runningPerKey < 1)
      throw new RangeError('maxRunningPerKey must be an integer of at least 1.');
    this.#options = options;
    this.#maxQueuedPerKey = perKey;
    this.#maxRunningPerKey = runningPerKey;
    this.#keyShare = runningPerKey / options.maxConcurrent;
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
    return this.#queued;
  }

  /**
   * Admits the query now when it fits with nobody waiting, else null (then `acquire` queues
   * it): the common case costs no promise, timer or abort listener.
   */
  tryAcquire(bytes: number, key = ''): Admission | null {
    const size = Number.isFinite(bytes) && bytes > 0 ? bytes : 0;
    return this.#queued === 0 && this.#fits(size, key) ? this.#admit(size, key) : null;
  }

  /**
   * Resolves when the query of `key` may run. Rejects with `too_many_requests` when the queue
   * or the key's part of it is full, and with the signal's reason when it aborts first (the
   * query leaves the queue).
   */
  acquire(bytes: number, signal: AbortSignal, key = ''): Promise<Admission> {
    const size = Number.isFinite(bytes) && bytes > 0 ? bytes : 0;
    if (signal.aborted) return Promise.reject(signal.reason);
    if (this.#queued === 0 && this.#fits(size, key)) return Promise.resolve(this.#admit(size, key));
    const refusal = this.#refusal(key);
    if (refusal) return Promise.reject(refusal);
    return new Promise<Admission>((resolve, reject) => {
      const onAbort = () => {
        this.#leave(key, waiter);
        reject(signal.reason);
        // The query that left may have been the one holding up those behind it.
        this.#admitWaiters();
      };
      const waiter: Waiter = {
        bytes: size,
        admit: () => {
          signal.removeEventListener('abort', onAbort);
          resolve(this.#admit(size, key));
        },
      };
      signal.addEventListener('abort', onAbort, { once: true });
      const queue = this.#queues.get(key);
      if (queue) queue.push(waiter);
      else this.#queues.set(key, [waiter]);
      this.#queued += 1;
      // Those ahead may wait only for their own key's queries to end: this one may fit now.
      this.#admitWaiters();
    });
  }

  /** Why a query of `key` may not wait now, or null when it may. */
  #refusal(key: string): InstanceError | null {
    if (this.#queued >= this.#options.maxQueued) {
      return new InstanceError(
        'too_many_requests',
        `This instance is running ${this.#running} queries and has ${this.#queued} waiting, its limit; retry shortly.`,
      );
    }
    const waiting = this.#queues.get(key)?.length ?? 0;
    if (waiting >= this.#maxQueuedPerKey) {
      return new InstanceError(
        'too_many_requests',
        `This key has ${waiting} queries waiting for a turn, the most one key may have waiting (docs/limits.md); retry shortly.`,
      );
    }
    return null;
  }

  /** Takes a waiter that gave up out of its key's queue; a key left with none loses its turn. */
  #leave(key: string, waiter: Waiter): void {
    const queue = this.#queues.get(key);
    const index = queue?.indexOf(waiter) ?? -1;
    if (!queue || index < 0) return;
    queue.splice(index, 1);
    this.#queued -= 1;
    if (queue.length === 0) this.#queues.delete(key);
  }

  #fits(bytes: number, key: string): boolean {
    if (this.#running >= this.#options.maxConcurrent || this.#keyIsFull(bytes, key)) return false;
    // Alone, any query runs: waiting would not make more memory appear.
    if (this.#running === 0) return true;
    return this.#inFlightBytes + bytes <= this.#options.workingMemoryBytes();
  }

  /**
   * True when `key`'s queries hold all it may hold: its running slots, or its share of the
   * working memory (as of the slots) with this query of `bytes` more; its first query runs
   * whatever its size. What one key may not take is there for the others' queries.
   */
  #keyIsFull(bytes: number, key: string): boolean {
    const holding = this.#byKey.get(key);
    if (holding === undefined || holding.running === 0) return false;
    if (holding.running >= this.#maxRunningPerKey) return true;
    return holding.bytes + bytes > this.#options.workingMemoryBytes() * this.#keyShare;
  }

  #admit(bytes: number, key: string): Admission {
    this.#running += 1;
    this.#inFlightBytes += bytes;
    const holding = this.#byKey.get(key);
    if (holding === undefined) this.#byKey.set(key, { running: 1, bytes });
    else {
      holding.running += 1;
      holding.bytes += bytes;
    }
    return new Admitted(this, bytes, key);
  }

  /** Gives back what `#admit` took (by `Admitted.release`, once). */
  returnAdmission(bytes: number, key: string): void {
    this.#running -= 1;
    this.#inFlightBytes -= bytes;
    const byKey = this.#byKey;
    const holding = byKey.get(key);
    if (holding !== undefined) {
      holding.running -= 1;
      holding.bytes -= bytes;
    }
    // A key's entry stays at zero rather than being deleted and made again on every query:
    // keys are few (the instance's API keys), and a map of many idle ones is swept.
    if (byKey.size > IDLE_KEYS_SWEPT_AT) {
      for (const [each, held] of byKey) if (held.running === 0) byKey.delete(each);
    }
    this.#admitWaiters();
  }

  /**
   * Admits the first waiter of the key whose turn it is while it fits, then moves that key to
   * the back of the turns: one query per key per round. The turn is never skipped for want of
   * a slot or memory, so the first waiter of the first key is never starved; a key holding
   * all the slots or memory one key may hold keeps its turn but lets the next keys' waiters in
   * meanwhile.
   */
  #admitWaiters(): void {
    // Most releases find nobody waiting: no iterator for them.
    if (this.#queued === 0) return;
    for (const [key, queue] of this.#queues) {
      const next = queue[0] as Waiter;
      if (this.#keyIsFull(next.bytes, key)) continue;
      if (!this.#fits(next.bytes, key)) return;
      queue.shift();
      this.#queued -= 1;
      // Deleted and, with waiters left, set again: the key's next turn is after every other's.
      this.#queues.delete(key);
      if (queue.length > 0) this.#queues.set(key, queue);
      next.admit();
    }
  }
}
