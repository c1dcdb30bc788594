import { EngineError } from '../errors.ts';

/** Text gathered before it becomes a buffer: big enough to amortise, small enough to stream. */
const CHUNK_CHARS = 32 * 1024;

/** An answer as the buffers it was written in; never one string. */
export interface QueryAnswer {
  readonly chunks: readonly Buffer[];
  readonly bytes: number;
  /** The engine's time for the query (`meta.timing_ms`, planning included); 0 when not timed. */
  readonly timingMs: number;
  /** Rows in `data` (`meta.pagination.count`); 0 when not counted. */
  readonly rows: number;
  /** The whole answer as text (tools and tests; a server sends `chunks`). */
  text(): string;
}

/**
 * Collects an answer's JSON text in UTF-8 chunks of about 32 KiB, counting bytes as it goes
 * and refusing, with `response_too_large`, the chunk that crosses the byte budget: a huge
 * answer stops being built within one chunk of the limit instead of exhausting the heap.
 */
export class JsonWriter {
  readonly #maxBytes: number;
  readonly #chunks: Buffer[] = [];
  #pending = '';
  #bytes = 0;

  constructor(maxBytes: number) {
    this.#maxBytes = maxBytes;
  }

  write(text: string): void {
    this.#pending += text;
    if (this.#pending.length >= CHUNK_CHARS) this.#flush();
  }

  finish(timingMs = 0, rows = 0): QueryAnswer {
    this.#flush();
    const chunks = this.#chunks;
    return {
      chunks,
      bytes: this.#bytes,
      timingMs,
      rows,
      text: () => Buffer.concat(chunks).toString('utf8'),
    };
  }

  #flush(): void {
    if (this.#pending === '') return;
    const chunk = Buffer.from(this.#pending, 'utf8');
    this.#pending = '';
    this.#bytes += chunk.length;
    if (this.#bytes > this.#maxBytes) {
      throw new EngineError(
        'response_too_large',
        `The answer would be larger than ${this.#maxBytes} bytes (query.max_response_bytes). Select fewer fields, lower LIMIT, or page with AFTER.`,
      );
    }
    this.#chunks.push(chunk);
  }
}
