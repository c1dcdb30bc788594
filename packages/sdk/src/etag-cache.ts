/**
 * GET answers by URL with their ETag, so a repeated query is sent with If-None-Match and a 304
 * reuses the stored body. Least recently used first out, within a count and a size.
 */

export interface EtagCacheOptions {
  /** Most answers kept. */
  readonly maxEntries?: number;
  /** Most UTF-16 code units of bodies kept in all; a body over a quarter of it is not kept. */
  readonly maxChars?: number;
}

interface Entry {
  readonly etag: string;
  readonly body: string;
}

export class EtagCache {
  readonly #entries = new Map<string, Entry>();
  readonly #maxEntries: number;
  readonly #maxChars: number;
  #chars = 0;

  constructor(options: EtagCacheOptions = {}) {
    this.#maxEntries = options.maxEntries ?? 256;
    this.#maxChars = options.maxChars ?? 4 * 1024 * 1024;
  }

  get size(): number {
    return this.#entries.size;
  }

  get(url: string): Entry | undefined {
    const entry = this.#entries.get(url);
    if (entry) {
      // Re-inserted to mark it most recently used.
      this.#entries.delete(url);
      this.#entries.set(url, entry);
    }
    return entry;
  }

  set(url: string, etag: string, body: string): void {
    this.delete(url);
    if (body.length > this.#maxChars / 4) return;
    this.#entries.set(url, { etag, body });
    this.#chars += body.length;
    for (const [oldest] of this.#entries) {
      if (this.#entries.size <= this.#maxEntries && this.#chars <= this.#maxChars) break;
      this.delete(oldest);
    }
  }

  delete(url: string): void {
    const entry = this.#entries.get(url);
    if (!entry) return;
    this.#chars -= entry.body.length;
    this.#entries.delete(url);
  }
}
