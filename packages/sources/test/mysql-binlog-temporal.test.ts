import { describe, expect, it } from 'vitest';
import {
  decodeClassicTime,
  decodeDatetime2,
  decodeTime2,
  decodeTimestamp2,
} from '../src/mysql/mysql-binlog-temporal.ts';
import { parseTimestampText, parseTimeText } from '../src/temporal-text.ts';

const bytes = (...values: number[]) => Uint8Array.from(values);

/** The big-endian bytes of `value` in `length` bytes. */
function be(value: number, length: number): number[] {
  return Array.from({ length }, (_, k) => Math.floor(value / 256 ** (length - 1 - k)) % 256);
}

/** A DATETIME2 as the binlog writes it (MySQL's `my_datetime_packed_to_binary`). */
function datetime2(y: number, mo: number, d: number, h: number, mi: number, s: number): number[] {
  const ymd = (y * 13 + mo) * 32 + d;
  const hms = h * 4096 + mi * 64 + s;
  return be(0x80_0000_0000 + ymd * 2 ** 17 + hms, 5);
}

describe('decodeTime2', () => {
  it('reads whole seconds, negative ones included (zongji gets -01:00:00 wrong)', () => {
    expect(decodeTime2(bytes(0x7f, 0xf0, 0x00), 0)).toBe(-3600);
    expect(decodeTime2(bytes(0xb4, 0x6e, 0xfb), 0)).toBe(3_020_399);
    expect(decodeTime2(bytes(0x4b, 0x91, 0x05), 0)).toBe(-3_020_399);
    expect(decodeTime2(bytes(0x80, 0x00, 0x00), 0)).toBe(0);
  });

  it('reads fractions of each width, counted down for negative values', () => {
    // -00:00:01.25 with 2 digits: integer part -2, fraction 0x100 - 25.
    expect(decodeTime2(bytes(0x7f, 0xff, 0xfe, 0xe7), 2)).toBe(-1.25);
    // -00:00:01.250 with 3 digits: fraction 0x10000 - 2500 (ten-thousandths).
    expect(decodeTime2(bytes(0x7f, 0xff, 0xfe, 0xf6, 0x3c), 3)).toBe(-1.25);
    // -00:00:00.000001 with 6 digits: the six bytes are 0x800000000000 - 1.
    expect(decodeTime2(bytes(0x7f, 0xff, 0xff, 0xff, 0xff, 0xff), 6)).toBe(-0.000001);
    // 12:34:56.7 with 1 digit, stored in hundredths: 70.
    expect(decodeTime2(bytes(0x80, 0xc8, 0xb8, 70), 1)).toBe(parseTimeText('12:34:56.7'));
    // 838:59:59.999999 with 6 digits.
    const max = decodeTime2(
      Uint8Array.from(be(0x8000_0000_0000 + 3_436_283 * 2 ** 24 + 999_999, 6)),
      6,
    );
    expect(max).toBe(parseTimeText('838:59:59.999999'));
  });
});

describe('decodeClassicTime', () => {
  it('reads the little-endian ±HHMMSS integer', () => {
    expect(decodeClassicTime(bytes(...be(10_000, 3).reverse()))).toBe(3600);
    expect(decodeClassicTime(bytes(...be(0x100_0000 - 10_000, 3).reverse()))).toBe(-3600);
    expect(decodeClassicTime(bytes(...be(8_385_959, 3).reverse()))).toBe(3_020_399);
  });
});

describe('decodeDatetime2', () => {
  it('reads a wall clock as UTC epoch microseconds, every fraction digit kept', () => {
    const at = datetime2(2024, 2, 29, 23, 59, 59);
    const second = Date.UTC(2024, 1, 29, 23, 59, 59) * 1000;
    expect(decodeDatetime2(bytes(...at), 0)).toBe(second);
    expect(decodeDatetime2(bytes(...at, ...be(1230, 2)), 3)).toBe(second + 123_000);
    expect(decodeDatetime2(bytes(...at, ...be(1234, 2)), 4)).toBe(second + 123_400);
    expect(decodeDatetime2(bytes(...at, ...be(123_450, 3)), 5)).toBe(second + 123_450);
    expect(decodeDatetime2(bytes(...at, ...be(999_999, 3)), 6)).toBe(second + 999_999);
    expect(decodeDatetime2(bytes(...at, 50), 1)).toBe(second + 500_000);
    expect(decodeDatetime2(bytes(...at, 12), 2)).toBe(second + 120_000);
    expect(
      decodeDatetime2(bytes(...datetime2(1969, 12, 31, 23, 59, 59), ...be(999_999, 3)), 6),
    ).toBe(-1);
    expect(decodeDatetime2(bytes(...datetime2(1000, 1, 1, 0, 0, 0)), 0)).toBe(
      Date.UTC(1000, 0, 1) * 1000,
    );
  });

  it('gives the identical double the snapshot text gives', () => {
    const at = datetime2(2022, 9, 10, 16, 46, 3);
    expect(decodeDatetime2(bytes(...at, ...be(905_795, 3)), 6)).toBe(
      parseTimestampText('2022-09-10 16:46:03.905795'),
    );
    const far = datetime2(9999, 12, 31, 23, 59, 59);
    expect(decodeDatetime2(bytes(...far, ...be(999_999, 3)), 6)).toBe(
      parseTimestampText('9999-12-31 23:59:59.999999'),
    );
  });

  it('gives null for zero dates', () => {
    expect(decodeDatetime2(bytes(...datetime2(0, 0, 0, 0, 0, 0)), 0)).toBeNull();
    expect(decodeDatetime2(bytes(...datetime2(2024, 0, 10, 10, 0, 0)), 0)).toBeNull();
    expect(decodeDatetime2(bytes(...datetime2(2024, 5, 0, 10, 0, 0)), 0)).toBeNull();
  });
});

describe('decodeTimestamp2', () => {
  it('reads unsigned epoch seconds and the fraction', () => {
    expect(decodeTimestamp2(bytes(...be(2_147_483_647, 4)), 0)).toBe(2_147_483_647_000_000);
    // Past 2038 (MariaDB 11.5+ stores up to 2106): unsigned, not negative.
    expect(decodeTimestamp2(bytes(...be(4_294_967_295, 4)), 0)).toBe(4_294_967_295_000_000);
    expect(decodeTimestamp2(bytes(...be(1, 4), ...be(123_456, 3)), 6)).toBe(1_123_456);
    expect(decodeTimestamp2(bytes(...be(1, 4), 7), 1)).toBe(1_070_000);
    expect(decodeTimestamp2(bytes(...be(1, 4), ...be(1_234, 2)), 3)).toBe(1_123_400);
  });

  it('gives null for the zero timestamp', () => {
    expect(decodeTimestamp2(bytes(0, 0, 0, 0), 0)).toBeNull();
    expect(decodeTimestamp2(bytes(0, 0, 0, 0, 0, 0), 3)).toBeNull();
  });
});
