import { createHash } from 'node:crypto';

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

/**
 * Remembers the ETags of one generation's queries: a hot query's tag is hashed once per
 * snapshot, not once per request. Starts over when the generation changes.
 */
export class EtagCache {
  readonly #bootId: string;
  #generation = -1;
  #tags = new Map<string, string>();

  constructor(bootId: string) {
    this.#bootId = bootId;
  }

  get(generation: number, query: string): string {
    if (generation !== this.#generation) {
      this.#generation = generation;
      this.#tags = new Map();
    }
    let tag = this.#tags.get(query);
    if (tag === undefined) {
      tag = queryEtag(this.#bootId, generation, query);
      if (this.#tags.size < 10_000) this.#tags.set(query, tag);
    }
    return tag;
  }
}
