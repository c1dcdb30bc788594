/**
 * Turns a driver's row events into batches with backpressure, for the snapshot readers whose
 * drivers push rows (MySQL's query events, SQL Server's stream mode): whenever a batch fills,
 * the stream is paused (TCP pushes back to the server) until the consumer asks for the next
 * batch. The reader wires the driver's events to `row`, `fail` and `end`, and yields `batches`.
 */
export class RowBatchPump {
  readonly #batchSize: number;
  readonly #convert: (row: unknown[]) => void;
  readonly #pause: () => void;
  readonly #resume: () => void;
  readonly #ready: unknown[][][] = [];
  #batch: unknown[][] = [];
  #ended = false;
  #failure: unknown;
  /** Set once the consumer is gone: rows and errors still on the wire are dropped. */
  #abandoned = false;
  #wake: (() => void) | undefined;

  /** `convert` turns a row into canonical values in place; `pause`/`resume` drive the stream. */
  constructor(
    batchSize: number,
    convert: (row: unknown[]) => void,
    stream: { pause(): void; resume(): void },
  ) {
    this.#batchSize = batchSize;
    this.#convert = convert;
    this.#pause = () => stream.pause();
    this.#resume = () => stream.resume();
  }

  /** Whether the driver has reported the end of the result. */
  get ended(): boolean {
    return this.#ended;
  }

  /** Whether the consumer is gone (see `abandon`). */
  get abandoned(): boolean {
    return this.#abandoned;
  }

  /** One row from the driver. A value that fails to convert fails the read. */
  row(row: unknown[]): void {
    if (this.#abandoned || this.#failure !== undefined) return;
    try {
      this.#convert(row);
    } catch (error) {
      this.#failure = error;
      this.#pause();
      this.#notify();
      return;
    }
    this.#batch.push(row);
    if (this.#batch.length >= this.#batchSize) {
      this.#ready.push(this.#batch);
      this.#batch = [];
      this.#pause();
      this.#notify();
    }
  }

  /** A driver error; the first one is what the read fails with. */
  fail(error: unknown): void {
    if (this.#abandoned) return;
    this.#failure ??= error;
    this.#notify();
  }

  /** The end of the result (after an error too); `error` when the driver ends by failing. */
  end(error?: unknown): void {
    if (error !== undefined) this.#failure ??= error;
    this.#ended = true;
    if (this.#batch.length > 0 && this.#failure === undefined) this.#ready.push(this.#batch);
    this.#batch = [];
    this.#notify();
  }

  /** The consumer is gone: what the driver still delivers is dropped. */
  abandon(): void {
    this.#abandoned = true;
  }

  /**
   * The batches in order; after the last one, the failure (as `errorOf` makes it) if there was
   * one. Waiting for rows resumes the stream.
   */
  async *batches(errorOf: (failure: unknown) => unknown): AsyncGenerator<unknown[][], void> {
    while (true) {
      const next = this.#ready.shift();
      if (next !== undefined) {
        yield next;
        continue;
      }
      if (this.#failure !== undefined) throw errorOf(this.#failure);
      if (this.#ended) return;
      await new Promise<void>((resolve) => {
        this.#wake = resolve;
        this.#resume();
      });
    }
  }

  #notify(): void {
    const wake = this.#wake;
    this.#wake = undefined;
    wake?.();
  }
}
