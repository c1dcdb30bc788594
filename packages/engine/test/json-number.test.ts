/** `writeNumber` writes exactly `String(n)`, or declines. */
import fc from 'fast-check';
import { describe, expect, it } from 'vitest';
import {
  MAX_NUMBER_BYTES,
  writeCivilDate,
  writeNumber,
  writeTimestamp,
  writeUnits,
} from '../src/exec/json-number.ts';
import { civilFromDays, timestampText } from '../src/storage/civil-date.ts';
import { formatUnits } from '../src/storage/decimal-units.ts';

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

/** The text `write` wrote at offset 4 of a buffer, or null when it returned -1. */
function writtenBy(write: (target: Uint8Array, at: number) => number): string | null {
  const target = new Uint8Array(MAX_NUMBER_BYTES + 8);
  const end = write(target, 4);
  if (end < 0) return null;
  expect(end - 4).toBeLessThanOrEqual(MAX_NUMBER_BYTES);
  return Buffer.from(target.subarray(4, end)).toString('latin1');
}

describe('writeUnits', () => {
  const units = (value: number, scale: number) =>
    writtenBy((target, at) => writeUnits(target, at, value, scale));

  it('writes formatUnits: signs, scale 0, fewer digits than the scale, the safe edges', () => {
    const edges = [0, 1, -1, 5, -5, 9, 10, 99, 100, -100, 1250, -1250, 123456789, 1e9, -1e9];
    for (const value of [...edges, 2 ** 53 - 1, -(2 ** 53 - 1), 2 ** 31, -(2 ** 31)]) {
      for (let scale = 0; scale <= 22; scale++) {
        expect(units(value, scale), `${value} at ${scale}`).toBe(formatUnits(value, scale));
      }
    }
    expect(units(-5, 2)).toBe('-0.05');
    expect(units(0, 3)).toBe('0.000');
    expect(units(-0, 2)).toBe('0.00');
    expect(units(42, 0)).toBe('42');
    expect(units(1445520, 2)).toBe('14455.20');
  });

  it('agrees with formatUnits for any safe integer at any scale', () => {
    fc.assert(
      fc.property(fc.maxSafeInteger(), fc.integer({ min: 0, max: 22 }), (value, scale) => {
        expect(units(value, scale)).toBe(formatUnits(value, scale));
      }),
      { numRuns: 20_000 },
    );
  });
});

describe('writeCivilDate', () => {
  const date = (days: number) => writtenBy((target, at) => writeCivilDate(target, at, days));
  /** Day numbers of 0000-03-01 and 10000-01-01. */
  const first = -719468;
  const end = 2932897;

  it('writes civilFromDays as a JSON string for the years 0..9999', () => {
    for (const days of [0, -1, 1, -25567, -25568, 47482, 47483, 11016, 19782, first, end - 1]) {
      expect(date(days), String(days)).toBe(`"${civilFromDays(days)}"`);
    }
    expect(date(-1)).toBe('"1969-12-31"');
    expect(date(first)).toBe('"0000-03-01"');
    expect(date(end - 1)).toBe('"9999-12-31"');
    fc.assert(
      fc.property(fc.integer({ min: first, max: end - 1 }), (days) => {
        expect(date(days)).toBe(`"${civilFromDays(days)}"`);
      }),
      { numRuns: 20_000 },
    );
  });

  it('declines the days whose text has a sign or five digits, and fractions', () => {
    for (const days of [first - 1, end, -1e9, 1e9, 0.5, -0.5, Number.NaN, Infinity]) {
      expect(date(days), String(days)).toBeNull();
    }
  });
});

describe('writeTimestamp', () => {
  const stamp = (micros: number, digits: 3 | 6) =>
    writtenBy((target, at) => writeTimestamp(target, at, micros, digits));
  const microsOf = (iso: string) => Date.parse(iso) * 1000;

  it('writes timestampText as a JSON string, milliseconds or microseconds', () => {
    const instants = [
      0,
      -1,
      1,
      999,
      1000,
      -1000,
      microsOf('1969-12-31T23:59:59.999Z') + 999,
      microsOf('1900-01-01T00:00:00.000Z'),
      microsOf('1899-12-31T23:59:59.999Z'),
      microsOf('2100-01-01T00:00:00.000Z') + 1,
      microsOf('2020-08-11T03:40:17.034Z'),
      microsOf('2022-09-27T21:21:43.461Z') + 795,
      2 ** 53 - 1,
      -(2 ** 53 - 1),
    ];
    for (const micros of instants) {
      for (const digits of [3, 6] as const) {
        expect(stamp(micros, digits), `${micros}`).toBe(`"${timestampText(micros, digits)}"`);
      }
    }
    expect(stamp(-1, 6)).toBe('"1969-12-31T23:59:59.999999Z"');
    expect(stamp(-1, 3)).toBe('"1969-12-31T23:59:59.999Z"');
  });

  it('agrees with timestampText for safe integers (years 1685..2255), and declines the rest', () => {
    fc.assert(
      fc.property(fc.maxSafeInteger(), fc.boolean(), (micros, six) => {
        const digits = six ? 6 : 3;
        expect(stamp(micros, digits)).toBe(`"${timestampText(micros, digits)}"`);
      }),
      { numRuns: 20_000 },
    );
    const far = [microsOf('0000-03-01T00:00:00.000Z'), microsOf('9999-12-31T23:59:59.999Z')];
    for (const micros of [...far, 2 ** 53, -(2 ** 53), 0.5, Number.NaN, -Infinity]) {
      expect(stamp(micros, 3), String(micros)).toBeNull();
    }
  });
});
