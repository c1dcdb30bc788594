import { describe, expect, it } from 'vitest';
import type { ColumnType } from '../src/source-schema.ts';
import { civilFromDays, daysFromCivil, parseCivilDate } from '../src/storage/civil-date.ts';
import { ColumnBuilder, formatStoredNumber } from '../src/storage/column-builder.ts';
import { numericComparable } from '../src/storage/comparable.ts';
import { isPlainNumberText, plainNumberValue } from '../src/storage/plain-number-text.ts';

/** A seeded generator in [0, 1): the same texts on every run. */
function seeded(seed: number): () => number {
  let state = seed >>> 0;
  return () => {
    state = (Math.imul(state, 1664525) + 1013904223) >>> 0;
    return state / 2 ** 32;
  };
}

/** Whether the stored double of `text` prints other digits or compares as another integer. */
function textDiffers(text: string, type: 'bigint' | 'decimal', scale: number | undefined) {
  const value = Number(text);
  return (
    formatStoredNumber(value, type, scale) !== text || typeof numericComparable(text) === 'bigint'
  );
}

describe('plainNumberValue (the load fast path of exact numbers)', () => {
  it('says plain only of texts whose double prints them back, for random texts', () => {
    const random = seeded(27);
    let plain = 0;
    for (let i = 0; i < 50_000; i++) {
      const scale = Math.floor(random() * 5);
      let text = random() < 0.3 ? '-' : '';
      const digits = Math.floor(random() * 19);
      for (let k = 0; k < digits; k++) text += String(Math.floor(random() * 10));
      if (digits === 0) text += '0';
      if (scale > 0) text += `.${String(Math.floor(random() * 10 ** scale)).padStart(scale, '0')}`;
      const type = scale === 0 && random() < 0.5 ? 'bigint' : 'decimal';
      if (!isPlainNumberText(text, scale)) continue;
      plain++;
      expect(textDiffers(text, type, type === 'bigint' ? undefined : scale), text).toBe(false);
      // The scan's double is the one `Number` parses, bit for bit.
      expect(Object.is(plainNumberValue(text, scale), Number(text)), text).toBe(true);
    }
    expect(plain).toBeGreaterThan(10_000);
  });

  it('leaves to the slow comparison what it cannot be sure of', () => {
    for (const [text, scale] of [
      ['9007199254740993', 0], // past 2^53
      ['1234567890123456', 0], // 16 digits
      ['007', 0],
      ['-0', 0],
      ['-0.00', 2],
      ['12.5', 2], // fewer fraction digits than the scale
      ['12.500', 2],
      ['1e5', 0],
      ['', 0],
      ['-', 0],
      ['12.', 0],
      ['1234567890123.45', 2], // 15 digits: still plain below
    ] as const) {
      expect(isPlainNumberText(text, scale), text).toBe(text === '1234567890123.45');
    }
    expect(isPlainNumberText('0.05', 2)).toBe(true);
    expect(isPlainNumberText('-17', 0)).toBe(true);
    expect(isPlainNumberText('-0.05', 2)).toBe(false); // `-0…`: the slow path decides
  });
});

describe('parseCivilDate', () => {
  /** The day number, through the text of every candidate day: the slow, obvious way. */
  function reference(text: string): number | undefined {
    const match = /^(-?\d{1,6})-(\d{2})-(\d{2})$/.exec(text);
    if (!match) return undefined;
    const days = daysFromCivil(Number(match[1]), Number(match[2]), Number(match[3]));
    return civilFromDays(days) === text ? days : undefined;
  }

  it('agrees with the text round trip on every month and edge day of many years', () => {
    for (let year = 0; year <= 9999; year += 7) {
      for (let month = 0; month <= 13; month++) {
        for (const day of [0, 1, 28, 29, 30, 31, 32]) {
          const text = `${String(year).padStart(4, '0')}-${String(month).padStart(2, '0')}-${String(day).padStart(2, '0')}`;
          expect(parseCivilDate(text), text).toBe(reference(text));
        }
      }
    }
  });

  it('keeps leap days right and refuses other shapes', () => {
    expect(parseCivilDate('2024-02-29')).toBe(daysFromCivil(2024, 2, 29));
    expect(parseCivilDate('2000-02-29')).toBe(daysFromCivil(2000, 2, 29));
    expect(parseCivilDate('1900-02-29')).toBeUndefined();
    expect(parseCivilDate('2023-02-29')).toBeUndefined();
    for (const text of ['2024/01/01', '12a4-01-01', ' 024-01-01', '2024-1-011', '2024-01-0x'])
      expect(parseCivilDate(text), text).toBeUndefined();
    expect(parseCivilDate('-001-03-01')).toBe(daysFromCivil(-1, 3, 1));
    expect(parseCivilDate('10000-01-01')).toBe(daysFromCivil(10000, 1, 1));
  });
});

describe('ColumnBuilder.appendColumn', () => {
  /** The chunk `append` builds value by value, and the one `appendColumn` builds in batches. */
  function both(type: ColumnType, values: readonly unknown[], scale?: number) {
    const one = new ColumnBuilder(type, scale);
    for (const value of values) one.append(value);
    const batched = new ColumnBuilder(type, scale);
    const rows = values.map((value) => ['other', value]);
    for (let start = 0; start < rows.length; start += 7)
      batched.appendColumn(rows, 1, start, Math.min(rows.length, start + 7));
    expect(batched.length).toBe(values.length);
    return { one: one.finish(), batched: batched.finish() };
  }

  it('builds the chunk append builds, for numbers, NULLs and a column widened mid-batch', () => {
    const cases: [ColumnType, unknown[], number?][] = [
      ['int', [1, null, -5, 2 ** 31 - 1, undefined, 7, 2 ** 31, 3, null, 1.5, 4]],
      ['int', Array.from({ length: 40 }, (_, i) => (i % 5 === 0 ? null : i * 1000))],
      ['float', [1.5, null, -0, Number.NaN, 1e300, undefined, 3]],
      ['timestamp', [1_700_000_000_000_000, null, 0, -86_400_000_000]],
      ['bigint', ['1', null, '9007199254740993', '-17', '007']],
      ['decimal', ['12.50', null, '-0.00', '123456789012345678.90', '0.05'], 2],
      ['date', ['2024-02-29', null, '2023-02-29', '0001-01-01']],
      ['string', ['a', null, 'ünï', '']],
    ];
    for (const [type, values, scale] of cases) {
      const { one, batched } = both(type, values, scale);
      expect(batched, `${type} ${JSON.stringify(values)}`).toEqual(one);
    }
  });
});
