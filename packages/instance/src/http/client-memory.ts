/**
 * The bytes a query thread holds for its clients once their answers are computed: answers
 * waiting in send buffers, live-query events waiting for slow readers, live-query texts kept
 * for re-evaluation. A query's admission covers computing its answer; these bytes outlive it,
 * so they are counted here, per key and in all. The thread reports the total beside its
 * queries' working memory (the memory cap and the admission gate count both), and no key may
 * hold more than its share of the thread's working memory: one key's stalled readers cannot
 * take the memory every other key's queries need.
 */

/** A key's share of the working memory for bytes held for its clients (docs/limits.md). */
export const CLIENT_MEMORY_KEY_SHARE = 0.25;

/**
 * The least a key may hold whatever the working memory left: room for one default-sized
 * answer (16 MiB) so a small instance still serves a big answer to a reader that reads.
 */
export const CLIENT_MEMORY_KEY_MIN_BYTES = 16 * 1024 * 1024;

/** Bytes held for one client: resized as its buffer fills and drains; released once. */
export interface HeldBytes {
  readonly bytes: number;
  /** Sets the bytes held now (0 to free them but keep the handle). */
  set(bytes: number): void;
  /** Frees the bytes for good. Idempotent. */
  release(): void;
}

export class ClientMemory {
  readonly #workingMemoryBytes: () => number;
  readonly #byKey = new Map<string, number>();
  #total = 0;

  /** `workingMemoryBytes`: the working memory this thread's queries and clients may hold. */
  constructor(workingMemoryBytes: () => number) {
    this.#workingMemoryBytes = workingMemoryBytes;
  }

  /** Bytes held for every client of this thread. */
  get totalBytes(): number {
    return this.#total;
  }

  /** Bytes held for the clients of `key`. */
  bytesOf(key: string): number {
    return this.#byKey.get(key) ?? 0;
  }

  /** The most one key may hold now. */
  keyShareBytes(): number {
    return Math.max(
      CLIENT_MEMORY_KEY_MIN_BYTES,
      Math.floor(this.#workingMemoryBytes() * CLIENT_MEMORY_KEY_SHARE),
    );
  }

  /** Whether `key` may hold `bytes` more within its share. */
  keyHasRoom(key: string, bytes: number): boolean {
    return this.bytesOf(key) + bytes <= this.keyShareBytes();
  }

  /** Starts counting bytes held for a client of `key`. */
  hold(key: string, bytes = 0): HeldBytes {
    let held = 0;
    let released = false;
    const change = (delta: number) => {
      if (delta === 0) return;
      this.#total += delta;
      const next = (this.#byKey.get(key) ?? 0) + delta;
      if (next > 0) this.#byKey.set(key, next);
      else this.#byKey.delete(key);
    };
    const handle: HeldBytes = {
      get bytes() {
        return held;
      },
      set(bytes: number) {
        if (released) return;
        const size = Number.isFinite(bytes) && bytes > 0 ? Math.floor(bytes) : 0;
        change(size - held);
        held = size;
      },
      release() {
        if (released) return;
        change(-held);
        held = 0;
        released = true;
      },
    };
    handle.set(bytes);
    return handle;
  }
}
