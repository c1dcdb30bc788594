import { describe, expect, it } from 'vitest';
import { ifNoneMatchMatches, queryEtag } from '../src/etag.ts';

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
