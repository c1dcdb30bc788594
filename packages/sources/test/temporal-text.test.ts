import { daysFromCivil } from '@replix/engine';
import { describe, expect, it } from 'vitest';
import { parseDateText, parseTimestampText, parseTimeText } from '../src/temporal-text.ts';

describe('daysFromCivil', () => {
  it('agrees with Date.UTC across leap years and centuries', () => {
    for (const [y, m, d] of [
      [1970, 1, 1],
      [1969, 12, 31],
      [2000, 2, 29],
      [1900, 3, 1],
      [2100, 12, 31],
      [1000, 1, 1],
      [9999, 12, 31],
      [1582, 10, 4],
    ] as const) {
      expect(daysFromCivil(y, m, d)).toBe(Date.UTC(y, m - 1, d) / 86_400_000);
    }
  });
});

/** Epoch microseconds of a UTC wall clock, by way of Date.UTC for the milliseconds. */
function utcMicros(y: number, mo: number, d: number, h = 0, mi = 0, s = 0, us = 0): number {
  return Date.UTC(y, mo - 1, d, h, mi, s) * 1000 + us;
}

describe('parseTimestampText', () => {
  it('reads MySQL text of every fraction length like the wall clock it names (fixed positions)', () => {
    const pad = (n: number, width: number) => String(n).padStart(width, '0');
    for (let i = 0; i < 5000; i++) {
      const y = 1 + ((i * 7919) % 9999);
      const mo = 1 + (i % 12);
      const d = 1 + (i % 28);
      const [h, mi, s] = [i % 24, (i * 7) % 60, (i * 13) % 60];
      const digits = i % 7;
      const fraction = (i * 104_729) % 10 ** digits;
      const text = `${pad(y, 4)}-${pad(mo, 2)}-${pad(d, 2)} ${pad(h, 2)}:${pad(mi, 2)}:${pad(s, 2)}${digits > 0 ? `.${pad(fraction, digits)}` : ''}`;
      const expected =
        (Date.UTC(2000, mo - 1, d, h, mi, s) +
          (daysFromCivil(y, mo, d) - daysFromCivil(2000, mo, d)) * 86_400_000) *
          1000 +
        fraction * 10 ** (6 - digits);
      expect(parseTimestampText(text), text).toBe(expected);
    }
    expect(parseTimestampText('2024-00-10 00:00:00')).toBeNull();
    expect(parseTimestampText('0000-00-00 00:00:00.000')).toBeNull();
    expect(() => parseTimestampText('2024-06-01 12:34:5x')).toThrow();
    expect(() => parseTimestampText('2024-06-01 12:34:56.1x')).toThrow();
  });

  it('reads a wall clock as UTC epoch microseconds', () => {
    expect(parseTimestampText('1970-01-01 00:00:00')).toBe(0);
    expect(parseTimestampText('2024-06-01 12:34:56')).toBe(utcMicros(2024, 6, 1, 12, 34, 56));
    expect(parseTimestampText('2024-06-01T12:34:56Z')).toBe(utcMicros(2024, 6, 1, 12, 34, 56));
  });

  it('keeps every fractional digit up to six (fsp 0..6), cutting any beyond', () => {
    const at = utcMicros(2024, 6, 1, 12, 34, 56);
    expect(parseTimestampText('2024-06-01 12:34:56.1')).toBe(at + 100_000);
    expect(parseTimestampText('2024-06-01 12:34:56.12')).toBe(at + 120_000);
    expect(parseTimestampText('2024-06-01 12:34:56.123')).toBe(at + 123_000);
    expect(parseTimestampText('2024-06-01 12:34:56.1234')).toBe(at + 123_400);
    expect(parseTimestampText('2024-06-01 12:34:56.12345')).toBe(at + 123_450);
    expect(parseTimestampText('2024-06-01 12:34:56.999999')).toBe(at + 999_999);
    expect(parseTimestampText('2024-06-01 12:34:56.9999999')).toBe(at + 999_999);
    expect(parseTimestampText('1969-12-31 23:59:59.9999')).toBe(-100);
    expect(parseTimestampText('1969-12-31 23:59:59.999999')).toBe(-1);
    expect(parseTimestampText('2024-02-29 23:59:59.999999')).toBe(utcMicros(2024, 3, 1) - 1);
  });

  it('applies offsets of timestamptz text', () => {
    const utc = utcMicros(2024, 1, 1, 10);
    expect(parseTimestampText('2024-01-01 10:00:00+00')).toBe(utc);
    expect(parseTimestampText('2024-01-01 12:00:00+02')).toBe(utc);
    expect(parseTimestampText('2024-01-01 05:30:00-04:30')).toBe(utc);
    expect(parseTimestampText('2024-01-01 10:00:10.5+00:00:10')).toBe(utc + 500_000);
    expect(parseTimestampText('2022-09-10 16:46:03.905795+00')).toBe(
      utcMicros(2022, 9, 10, 16, 46, 3, 905_795),
    );
    expect(parseTimestampText('2022-09-10 18:46:03.905795+02')).toBe(
      utcMicros(2022, 9, 10, 16, 46, 3, 905_795),
    );
  });

  it('handles years before 1970, before 100 and BC, and beyond 9999', () => {
    const early = new Date(Date.UTC(2000, 0, 1));
    early.setUTCFullYear(50);
    expect(parseTimestampText('0050-01-01 00:00:00')).toBe(early.getTime() * 1000);
    const bc = new Date(Date.UTC(2000, 2, 15));
    bc.setUTCFullYear(-43); // 44 BC
    expect(parseTimestampText('0044-03-15 00:00:00 BC')).toBe(bc.getTime() * 1000);
    expect(parseTimestampText('0044-03-15 00:00:00+00 BC')).toBe(bc.getTime() * 1000);
    const far = new Date(Date.UTC(2000, 0, 1));
    far.setUTCFullYear(10000);
    expect(parseTimestampText('10000-01-01 00:00:00')).toBe(far.getTime() * 1000);
  });

  it('makes MySQL zero dates and PostgreSQL infinities null', () => {
    expect(parseTimestampText('0000-00-00 00:00:00')).toBeNull();
    expect(parseTimestampText('0000-00-00 00:00:00.000000')).toBeNull();
    expect(parseTimestampText('2024-00-10 00:00:00')).toBeNull();
    expect(parseTimestampText('2024-05-00 00:00:00')).toBeNull();
    expect(parseTimestampText('infinity')).toBeNull();
    expect(parseTimestampText('-infinity')).toBeNull();
  });

  it('rejects text of another shape without guessing', () => {
    for (const text of [
      '',
      'yesterday',
      '2024-01-01',
      '2024-01-01 10:00',
      '2024-01-01 10:00:00 x',
    ]) {
      expect(() => parseTimestampText(text)).toThrow(/Unexpected timestamp text/);
    }
  });
});

describe('parseTimeText', () => {
  it('keeps microseconds as the double nearest to the decimal text', () => {
    for (const text of ['23:59:59.999999', '12:34:56.000001', '838:59:59.999999', '00:00:00.1']) {
      const seconds = text.split(':').reduce((total, part) => total * 60 + Number(part), 0);
      expect(parseTimeText(text)).toBe(Number(seconds.toFixed(6)));
    }
    expect(parseTimeText('23:59:59.999999')).toBe(86_399.999999);
    expect(parseTimeText('-00:00:00.000001')).toBe(-0.000001);
    expect(parseTimeText('12:00:00.1234567')).toBe(43_200.123456);
    expect(parseTimeText('23:59:59.999999+01')).toBe(82_799.999999);
    expect(parseTimeText('00:00:00.000001+00:00:01')).toBe(86_399.000001);
  });

  it('reads times of day and MySQL durations as seconds', () => {
    expect(parseTimeText('00:00:00')).toBe(0);
    expect(parseTimeText('12:34:56')).toBe(45_296);
    expect(parseTimeText('24:00:00')).toBe(86_400);
    expect(parseTimeText('838:59:59')).toBe(3_020_399);
    expect(parseTimeText('-838:59:59.000000')).toBe(-3_020_399);
    expect(parseTimeText('-00:00:01.500000')).toBe(-1.5);
    expect(parseTimeText('100:00:00.25')).toBe(360_000.25);
  });

  it('converts a time with zone to UTC, within one day', () => {
    expect(parseTimeText('12:00:00+00')).toBe(43_200);
    expect(parseTimeText('12:00:00+02')).toBe(36_000);
    expect(parseTimeText('01:00:00+02')).toBe(82_800);
    expect(parseTimeText('23:00:00-02')).toBe(3_600);
    expect(parseTimeText('10:00:00.5+05:30')).toBe(16_200.5);
    expect(parseTimeText('24:00:00+00')).toBe(0);
  });

  it('rejects text of another shape', () => {
    for (const text of ['', 'noon', '12:00', '12:00:00 x']) {
      expect(() => parseTimeText(text)).toThrow(/Unexpected time text/);
    }
  });
});

describe('parseDateText', () => {
  it('keeps a date as its YYYY-MM-DD text, with no time zone shift', () => {
    expect(parseDateText('2024-02-29')).toBe('2024-02-29');
    expect(parseDateText('1000-01-01')).toBe('1000-01-01');
  });

  it('makes zero dates, infinities and BC dates null', () => {
    expect(parseDateText('0000-00-00')).toBeNull();
    expect(parseDateText('2024-00-01')).toBeNull();
    expect(parseDateText('2024-01-00')).toBeNull();
    expect(parseDateText('infinity')).toBeNull();
    expect(parseDateText('-infinity')).toBeNull();
    expect(parseDateText('0044-03-15 BC')).toBeNull();
  });
});
