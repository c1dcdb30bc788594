/** Buffers of a `PublicationBoard`, handed to each query thread in its `workerData`. */
export interface PublicationBuffers {
  readonly word: SharedArrayBuffer;
  readonly figures: SharedArrayBuffer;
}

/** Publications written ahead of the one served; a reader's two reads are nanoseconds apart. */
const RING = 64;
const LAST_SYNC_AT = 0;
const WORKING_LIMIT = 1;
const FIRST_THREAD = 2;

/**
 * What every query thread reads of the served snapshot, in shared memory: one word names the
 * served publication (a slot of a ring holding a generation id and its swap count, written
 * before the word), set with one `Atomics.store`, so every thread switches at the same instant
 * and no thread can answer an older swap count once any has answered a newer one; beside figures that may lag a little: when the snapshot
 * was last in sync, the working memory queries may hold, and each thread's in-flight bytes and
 * bytes held for clients.
 */
export class PublicationBoard {
  readonly buffers: PublicationBuffers;
  readonly #threads: number;
  /** [0]: the served publication's number (0: none); then the ring of (id, swap count). */
  readonly #word: Int32Array;
  readonly #figures: Float64Array;

  constructor(threads: number, buffers?: PublicationBuffers) {
    // Per thread: its in-flight bytes, then (after every thread's) its bytes held for clients.
    this.#threads = threads;
    this.buffers = buffers ?? {
      word: new SharedArrayBuffer(4 * (1 + 2 * RING)),
      figures: new SharedArrayBuffer(8 * (FIRST_THREAD + 2 * threads)),
    };
    this.#word = new Int32Array(this.buffers.word);
    this.#figures = new Float64Array(this.buffers.figures);
  }

  /** Makes `generationId` (with its swap count) the one every thread serves. */
  publish(generationId: number, swapCount: number): void {
    const next = (Atomics.load(this.#word, 0) % RING) + 1;
    Atomics.store(this.#word, 2 * next - 1, generationId);
    Atomics.store(this.#word, 2 * next, swapCount);
    Atomics.store(this.#word, 0, next);
  }

  /** The served generation's id and swap count; id 0 before the first snapshot is in. */
  served(): { readonly generationId: number; readonly swapCount: number } {
    const slot = Atomics.load(this.#word, 0);
    if (slot === 0) return { generationId: 0, swapCount: 0 };
    return {
      generationId: Atomics.load(this.#word, 2 * slot - 1),
      swapCount: Atomics.load(this.#word, 2 * slot),
    };
  }

  get lastSyncAt(): number {
    return this.#figures[LAST_SYNC_AT] ?? 0;
  }

  set lastSyncAt(at: number) {
    this.#figures[LAST_SYNC_AT] = at;
  }

  /** The working memory all threads' queries may hold together (written by the main thread). */
  get workingLimitBytes(): number {
    return this.#figures[WORKING_LIMIT] ?? 0;
  }

  set workingLimitBytes(bytes: number) {
    this.#figures[WORKING_LIMIT] = bytes;
  }

  /** Each thread writes only its own slot, so plain stores suffice. */
  setInFlightBytes(thread: number, bytes: number): void {
    this.#figures[FIRST_THREAD + thread] = bytes;
  }

  /** In-flight query bytes of every thread but `except` (-1: of all threads). */
  inFlightBytes(except = -1): number {
    return this.#sum(FIRST_THREAD, except);
  }

  /** Bytes `thread` holds for clients (already counted in its in-flight bytes). */
  setClientHeldBytes(thread: number, bytes: number): void {
    this.#figures[FIRST_THREAD + this.#threads + thread] = bytes;
  }

  /** Bytes held for clients by every thread but `except` (-1: by all threads). */
  clientHeldBytes(except = -1): number {
    return this.#sum(FIRST_THREAD + this.#threads, except);
  }

  #sum(first: number, except: number): number {
    let sum = 0;
    for (let thread = 0; thread < this.#threads; thread++) {
      if (thread !== except) sum += this.#figures[first + thread] ?? 0;
    }
    return sum;
  }
}
