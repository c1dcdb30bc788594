import { setFlagsFromString } from 'node:v8';
import { runInNewContext } from 'node:vm';
import { describe, expect, it } from 'vitest';
import {
  ETAG_CACHE_MAX_BYTES,
  EtagCache,
  etagEntryBytes,
  ifNoneMatchMatches,
  queryEtag,
} from '../src/http/etag.ts';

describe('ETags', () => {
  it('depend on boot, generation and query', () => {
    const tag = queryEtag('boot-a', 1, 'q');
    expect(queryEtag('boot-a', 1, 'q')).toBe(tag);
    expect(queryEtag('boot-b', 1, 'q')).not.toBe(tag);
    expect(queryEtag('boot-a', 2, 'q')).not.toBe(tag);
    expect(queryEtag('boot-a', 1, 'q2')).not.toBe(tag);
  });

  it('match If-None-Match with one tag, lists, weak tags and *', () => {
    const tag = '"abc"';
    expect(ifNoneMatchMatches('"abc"', tag)).toBe(true);
    expect(ifNoneMatchMatches('"x", "abc"', tag)).toBe(true);
    expect(ifNoneMatchMatches('W/"abc"', tag)).toBe(true);
    expect(ifNoneMatchMatches('*', tag)).toBe(true);
    expect(ifNoneMatchMatches('"abcd"', tag)).toBe(false);
    expect(ifNoneMatchMatches(undefined, tag)).toBe(false);
  });
});

describe('EtagCache', () => {
  it('returns the same tag queryEtag computes, and caches it', () => {
    const cache = new EtagCache('boot');
    expect(cache.get(3, 'p { id }')).toBe(queryEtag('boot', 3, 'p { id }'));
    expect(cache.get(3, 'p { id }')).toBe(queryEtag('boot', 3, 'p { id }'));
    expect(cache.size).toBe(1);
    expect(cache.bytes).toBe(etagEntryBytes('p { id }', queryEtag('boot', 3, 'p { id }')));
  });

  it('starts over when the generation changes', () => {
    const cache = new EtagCache('boot');
    cache.get(1, 'a');
    cache.get(1, 'b');
    expect(cache.get(2, 'a')).toBe(queryEtag('boot', 2, 'a'));
    expect(cache.size).toBe(1);
  });

  it('stays within its byte budget however many distinct queries arrive', () => {
    const maxBytes = 64 * 1024;
    const cache = new EtagCache('boot', { maxBytes });
    for (let i = 0; i < 2000; i++) cache.get(1, `p (id = ${i}) { id ${'x'.repeat(200)} }`);
    expect(cache.bytes).toBeLessThanOrEqual(maxBytes);
    expect(cache.size).toBeGreaterThan(50);
    expect(cache.size).toBeLessThan(2000);
  });

  it('holds at most its budget of heap, even full of the shortest queries', () => {
    setFlagsFromString('--expose-gc');
    const gc = runInNewContext('gc') as () => void;
    gc();
    gc();
    const before = process.memoryUsage().heapUsed;
    const cache = new EtagCache('boot');
    // Flat strings, as a request's query is: an entry's bookkeeping outweighs its characters.
    for (let i = 0; i < 40_000; i++) cache.get(1, JSON.parse(`"p{id}${i}"`) as string);
    gc();
    gc();
    const held = process.memoryUsage().heapUsed - before;
    expect(cache.size).toBeGreaterThan(5000);
    expect(held, `${Math.round(held / 1024)} KiB held`).toBeLessThanOrEqual(ETAG_CACHE_MAX_BYTES);
  });

  it('evicts the least recently used tag first', () => {
    const query = (n: number) => `q${n} ${'y'.repeat(400)}`;
    const perEntry = etagEntryBytes(query(0), queryEtag('boot', 1, query(0)));
    const cache = new EtagCache('boot', { maxBytes: perEntry * 3 + 1, maxEntryBytes: perEntry });
    cache.get(1, query(1));
    cache.get(1, query(2));
    cache.get(1, query(3));
    cache.get(1, query(1)); // 1 is now the most recently used; 2 the least
    cache.get(1, query(4));
    expect(cache.size).toBe(3);
    const before = cache.bytes;
    cache.get(1, query(1));
    cache.get(1, query(3));
    expect(cache.bytes).toBe(before); // 1 and 3 were still cached: nothing was added
  });

  it('hashes an oversized query every time rather than evicting the hot ones', () => {
    const cache = new EtagCache('boot', { maxBytes: 64 * 1024 });
    cache.get(1, 'hot');
    const huge = 'z'.repeat(20_000);
    expect(cache.get(1, huge)).toBe(queryEtag('boot', 1, huge));
    expect(cache.size).toBe(1);
  });

  it('defaults to a budget of 4 MiB', () => {
    expect(ETAG_CACHE_MAX_BYTES).toBe(4 * 1024 * 1024);
  });
});
