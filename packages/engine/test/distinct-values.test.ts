import fc from 'fast-check';
import { describe, expect, it } from 'vitest';
import { DistinctValues } from '../src/exec/distinct-values.ts';

describe('DistinctValues', () => {
  it('counts what a Set counts, for any mix of numbers, texts and bigints', () => {
    const key = fc.oneof(
      fc.integer({ min: -5, max: 5 }),
      fc.integer(),
      fc.double(),
      fc.constantFrom(0, -0, Number.NaN, 2 ** 53, 2 ** 60, -(2 ** 60), 0.1, 1 << 19, -(1 << 19)),
      fc.integer({ min: -(1 << 21), max: 1 << 21 }),
      fc.string({ maxLength: 3 }),
      fc.bigInt({ min: 2n ** 53n, max: 2n ** 64n }),
      fc.boolean(),
    );
    fc.assert(
      fc.property(fc.array(key, { maxLength: 300 }), (keys) => {
        const distinct = new DistinctValues();
        const set = new Set<unknown>();
        for (const value of keys) {
          const before = set.size;
          set.add(value);
          expect(distinct.add(value)).toBe(set.size !== before);
        }
        expect(distinct.size).toBe(set.size);
      }),
      { numRuns: 300 },
    );
  });

  it('keeps integers far from the first one, and many values, apart', () => {
    const distinct = new DistinctValues();
    const first = 1_000_000;
    for (let i = 0; i < 50_000; i++) distinct.add(first + i * 37);
    for (let i = 0; i < 50_000; i++) distinct.add(first + i * 37);
    expect(distinct.size).toBe(50_000);
    expect(distinct.add(first + 37 * 50_000)).toBe(true);
    expect(distinct.add(first - 2 ** 40)).toBe(true);
    expect(distinct.add(first - 2 ** 40)).toBe(false);
    expect(distinct.size).toBe(50_002);
  });
});
