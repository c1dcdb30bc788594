/** `writeNumber` writes exactly `String(n)`, or declines. */
import fc from 'fast-check';
import { describe, expect, it } from 'vitest';
import { MAX_NUMBER_BYTES, writeNumber } from '../src/exec/json-number.ts';

/** What `writeNumber` wrote for `value`, or null when it declined. */
function written(value: number): string | null {
  const target = new Uint8Array(MAX_NUMBER_BYTES + 8);
  const end = writeNumber(target, 4, value);
  if (end < 0) return null;
  expect(end - 4).toBeLessThanOrEqual(MAX_NUMBER_BYTES);
  return Buffer.from(target.subarray(4, end)).toString('latin1');
}

function expectExact(value: number): void {
  const text = written(value);
  if (text !== null) expect(text).toBe(String(value));
}

describe('writeNumber', () => {
  it('writes integers, decimals and the edges of its range as String does', () => {
    for (const value of [
      0,
      -0,
      1,
      -1,
      7,
      10,
      99,
      100,
      123456789,
      999999999,
      1000000000,
      1234567890123,
      2 ** 53 - 1,
      -(2 ** 53 - 1),
      0.5,
      -0.5,
      0.1,
      0.2,
      0.30000000000000004,
      1.5,
      12.25,
      1645.3942,
      17961.36,
      0.000001,
      0.0000015,
      0.00001,
      1e-6,
      1.0000000000000002,
      9.999999999999998,
      123.456,
      2 ** 49 + 0.5,
      2 ** 50 - 0.25,
      4503599627370495.5,
      2.5,
    ]) {
      expectExact(value);
    }
    expect(written(1645.3942)).toBe('1645.3942');
    expect(written(-0)).toBe('0');
    expect(written(0.000001)).toBe('0.000001');
    expect(written(2 ** 53 - 1)).toBe('9007199254740991');
  });

  it('declines what it does not write: exponents, huge values, non-finite numbers', () => {
    for (const value of [1e-7, 9.99e-7, 2 ** 53, 1e21, 1e300, Number.NaN, Infinity, -Infinity]) {
      expect(written(value)).toBeNull();
    }
  });

  it('writes most short decimals itself', () => {
    expect(written(1234.5678)).toBe('1234.5678');
    expect(written(-98765.4321)).toBe('-98765.4321');
    expect(written(0.0042)).toBe('0.0042');
  });

  it('agrees with String for any double', () => {
    fc.assert(
      fc.property(fc.double(), (value) => expectExact(value)),
      { numRuns: 20_000 },
    );
  });

  it('agrees with String for decimals with few digits, at any scale', () => {
    fc.assert(
      fc.property(
        fc.integer({ min: -(2 ** 52), max: 2 ** 52 }),
        fc.integer({ min: 0, max: 22 }),
        (digits, scale) => {
          const value = digits / 10 ** scale;
          expectExact(value);
          expectExact(Number(`${digits}e-${scale}`));
        },
      ),
      { numRuns: 20_000 },
    );
  });
});
