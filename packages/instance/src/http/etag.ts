import { createHash } from 'node:crypto';
import { SizedCache } from '@replix/engine';

/** An opaque strong ETag for a query result: boot id, snapshot generation and query text. */
export function queryEtag(bootId: string, generation: number, query: string): string {
  const hash = createHash('sha256')
    .update(`${bootId}\u0000${generation}\u0000${query}`)
    .digest('base64url');
  return `"${hash.slice(0, 27)}"`;
}

/**
 * True when an `If-None-Match` header (one tag, a comma-separated list, weak `W/` tags, or `*`)
 * matches `etag`. Weak comparison, as RFC 9110 prescribes for If-None-Match.
 */
export function ifNoneMatchMatches(header: string | undefined, etag: string): boolean {
  if (!header) return false;
  if (header.trim() === '*') return true;
  return header.split(',').some((part) => {
    const tag = part.trim();
    return (tag.startsWith('W/') ? tag.slice(2) : tag) === etag;
  });
}

/** What the ETag cache may hold, counted as `etagEntryBytes` (docs/limits.md). */
export const ETAG_CACHE_MAX_BYTES = 4 * 1024 * 1024;
/**
 * Bookkeeping per entry beyond its two strings' characters (the map's slot, the LRU's list
 * slots, the entry's record, string headers): about 200 bytes of heap measured with short queries, where it is
 * most of an entry (etag.test.ts measures a cache full of them).
 */
const ENTRY_OVERHEAD_BYTES = 320;

/** The bytes one cached tag is counted as: its query and tag as UTF-16, plus overhead. */
export function etagEntryBytes(query: string, tag: string): number {
  return 2 * (query.length + tag.length) + ENTRY_OVERHEAD_BYTES;
}

export interface EtagCacheLimits {
  /** Default `ETAG_CACHE_MAX_BYTES`. */
  readonly maxBytes?: number;
  /** The largest entry kept; bigger ones are hashed every time. Default 1/64 of `maxBytes`. */
  readonly maxEntryBytes?: number;
}

/**
 * Remembers the ETags of one generation's queries: a hot query's tag is hashed once per
 * snapshot, not once per request. Starts over when the generation changes. Bounded by bytes,
 * least recently used first out, so many distinct long queries cannot grow it past `maxBytes`;
 * a query bigger than `maxEntryBytes` is hashed every time instead of evicting the hot ones.
 */
export class EtagCache {
  readonly #bootId: string;
  #generation = -1;
  readonly #tags: SizedCache<string>;

  constructor(bootId: string, limits: EtagCacheLimits = {}) {
    this.#bootId = bootId;
    const maxBytes = limits.maxBytes ?? ETAG_CACHE_MAX_BYTES;
    this.#tags = new SizedCache<string>({
      maxBytes,
      maxEntryBytes: limits.maxEntryBytes ?? Math.max(1, Math.floor(maxBytes / 64)),
    });
  }

  get(generation: number, query: string): string {
    if (generation !== this.#generation) {
      this.#generation = generation;
      this.#tags.clear();
    }
    let tag = this.#tags.get(query);
    if (tag === undefined) {
      tag = queryEtag(this.#bootId, generation, query);
      this.#tags.set(query, tag, etagEntryBytes(query, tag));
    }
    return tag;
  }

  /** The bytes the cached tags are counted as (at most `maxBytes`). */
  get bytes(): number {
    return this.#tags.bytes;
  }

  /** How many tags are cached. */
  get size(): number {
    return this.#tags.size;
  }
}
