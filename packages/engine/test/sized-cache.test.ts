/**
 * SizedCache: bounded by the bytes its entries are counted as, least recently used first out,
 * though a hit moves its entry to the recent end only once it has drifted into the older half.
 */
import { describe, expect, it } from 'vitest';
import { SizedCache } from '../src/exec/sized-cache.ts';

describe('SizedCache', () => {
  it('answers what was set, and nothing for a key never set', () => {
    const cache = new SizedCache<{ plan: string }>({ maxBytes: 1000 });
    const value = { plan: 'p' };
    cache.set('a', value, 10);
    expect(cache.get('a')).toBe(value);
    expect(cache.get('b')).toBeUndefined();
    expect(cache.size).toBe(1);
    expect(cache.bytes).toBe(10);
  });

  it('never counts more bytes than its bound: the least recently set go first', () => {
    const cache = new SizedCache<number>({ maxBytes: 100 });
    for (let i = 0; i < 50; i++) cache.set(`k${i}`, i, 10);
    expect(cache.bytes).toBe(100);
    expect(cache.size).toBe(10);
    expect(cache.get('k39')).toBeUndefined();
    for (let i = 40; i < 50; i++) expect(cache.get(`k${i}`)).toBe(i);
  });

  it('keeps an entry in use through a flood of others, and loses one that is not', () => {
    const cache = new SizedCache<string>({ maxBytes: 1000 });
    cache.set('hot', 'kept', 10);
    cache.set('cold', 'lost', 10);
    // One hit per 40 insertions, under half of the 100 entries that fit.
    for (let i = 0; i < 5000; i++) {
      cache.set(`flood ${i}`, 'x', 10);
      if (i % 40 === 0) expect(cache.get('hot')).toBe('kept');
    }
    expect(cache.get('hot')).toBe('kept');
    expect(cache.get('cold')).toBeUndefined();
    expect(cache.bytes).toBeLessThanOrEqual(1000);
  });

  it('moves an entry to the recent end when a hit finds it in the older half', () => {
    const cache = new SizedCache<number>({ maxBytes: 100 });
    cache.set('first', 1, 10);
    for (let i = 0; i < 3; i++) cache.set(`k${i}`, i, 10);
    // `first` is 3 insertions old of 4 entries: in the older half, so this hit moves it.
    expect(cache.get('first')).toBe(1);
    for (let i = 3; i < 12; i++) cache.set(`k${i}`, i, 10);
    // Moved at the hit, it outlived k0..k2, set before that hit.
    expect(cache.get('first')).toBe(1);
    expect(cache.get('k0')).toBeUndefined();
    expect(cache.get('k2')).toBeUndefined();
  });

  it('leaves an entry where it is when a hit finds it in the recent half', () => {
    const cache = new SizedCache<number>({ maxBytes: 40 });
    cache.set('first', 1, 10);
    cache.set('k0', 0, 10);
    // 1 insertion old of 2 entries: not past half, so the hit only reads.
    expect(cache.get('first')).toBe(1);
    for (let i = 1; i < 4; i++) cache.set(`k${i}`, i, 10);
    // Still the least recently moved, it went first.
    expect(cache.get('first')).toBeUndefined();
    expect(cache.get('k0')).toBe(0);
  });

  it('does not keep an entry over its largest entry size, nor drop others for it', () => {
    const cache = new SizedCache<string>({ maxBytes: 100, maxEntryBytes: 20 });
    cache.set('small', 's', 20);
    cache.set('big', 'b', 21);
    expect(cache.get('big')).toBeUndefined();
    expect(cache.get('small')).toBe('s');
    expect(cache.bytes).toBe(20);
  });

  it('replaces the value of a key set again, counting its new bytes', () => {
    const cache = new SizedCache<string>({ maxBytes: 100 });
    cache.set('a', 'one', 10);
    cache.set('a', 'two', 30);
    expect(cache.get('a')).toBe('two');
    expect(cache.size).toBe(1);
    expect(cache.bytes).toBe(30);
  });

  it('empties on clear', () => {
    const cache = new SizedCache<string>({ maxBytes: 100 });
    cache.set('a', 'one', 10);
    cache.clear();
    expect(cache.get('a')).toBeUndefined();
    expect(cache.size).toBe(0);
    expect(cache.bytes).toBe(0);
  });
});
