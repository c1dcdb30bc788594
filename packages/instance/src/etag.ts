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
