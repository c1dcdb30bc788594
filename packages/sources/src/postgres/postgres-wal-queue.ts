/** Flow control for a `WalQueue`: called as it fills past its high mark and drains below its low. */
export interface QueueFlow {
  readonly high: number;
  readonly low: number;
  pause(): void;
  resume(): void;
}

/**
 * Messages read off the replication socket, waiting for the change stream to take them: the
 * socket pushes as data arrives, the stream pulls when its consumer asks for more. Past `high`
 * waiting messages the socket is paused, so a slow consumer holds the walsender back instead of
 * filling memory.
 */
export class WalQueue<T> {
  readonly #flow: QueueFlow;
  #items: T[] = [];
  #head = 0;
  #waiter: (() => void) | null = null;
  #paused = false;
  #closed = false;
  #failure: { readonly error: unknown } | null = null;

  constructor(flow: QueueFlow) {
    this.#flow = flow;
  }

  get size(): number {
    return this.#items.length - this.#head;
  }

  push(item: T): void {
    if (this.#closed || this.#failure) return;
    this.#items.push(item);
    if (!this.#paused && this.size > this.#flow.high) {
      this.#paused = true;
      this.#flow.pause();
    }
    this.#wake();
  }

  /** Ends with an error, thrown by `next` once the messages before it are taken. */
  fail(error: unknown): void {
    if (this.#closed || this.#failure) return;
    this.#failure = { error };
    this.#wake();
  }

  /** Ends at once: `next` returns null from now on, whatever is still waiting. */
  close(): void {
    this.#closed = true;
    this.#items = [];
    this.#head = 0;
    this.#wake();
  }

  /** The next message; null once closed. */
  async next(): Promise<T | null> {
    while (this.size === 0 && !this.#closed) {
      if (this.#failure) throw this.#failure.error;
      await new Promise<void>((resolve) => {
        this.#waiter = resolve;
      });
    }
    if (this.#closed) return null;
    const item = this.#items[this.#head]!;
    this.#head++;
    if (this.#head === this.#items.length) {
      this.#items = [];
      this.#head = 0;
    } else if (this.#head > 4096 && this.#head * 2 > this.#items.length) {
      this.#items = this.#items.slice(this.#head); // drop the taken front now and then
      this.#head = 0;
    }
    if (this.#paused && this.size < this.#flow.low) {
      this.#paused = false;
      this.#flow.resume();
    }
    return item;
  }

  #wake(): void {
    const waiter = this.#waiter;
    this.#waiter = null;
    waiter?.();
  }
}
