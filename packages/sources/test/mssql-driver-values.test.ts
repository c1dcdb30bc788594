import { readValue } from 'tedious/lib/value-parser.js';
import { describe, expect, it } from 'vitest';
import { msSqlDate, msSqlTimeSeconds, msSqlTimestamp } from '../src/mssql/mssql-types.ts';

/**
 * The converters fed by tedious' own decoder, with values written in the TDS wire format by
 * hand: what a server would send, without a server. tedious' value parser is internal, so these
 * tests pin the driver behaviour the connector relies on (UTC decoding, the ticks beyond the
 * millisecond, lossy DECIMAL and MONEY) and fail loudly if a driver upgrade changes it.
 */

type Metadata = Parameters<typeof readValue>[2];
type Options = Parameters<typeof readValue>[3];

function decode(typeName: string, bytes: Buffer, extra: Record<string, unknown> = {}): unknown {
  const metadata = { type: { name: typeName }, ...extra } as unknown as Metadata;
  const options = { useUTC: true, lowerCaseGuids: false } as unknown as Options;
  return readValue(bytes, 0, metadata, options).value;
}

function littleEndian(value: bigint, bytes: number): Buffer {
  const buffer = Buffer.alloc(bytes);
  for (let i = 0; i < bytes; i++) buffer[i] = Number((value >> BigInt(8 * i)) & 0xffn);
  return buffer;
}

/** Days since 0001-01-01, as DATE and DATETIME2 send them. */
function days(year: number, month: number, day: number): bigint {
  const date = new Date(Date.UTC(2000, month - 1, day));
  date.setUTCFullYear(year);
  return BigInt(Math.round(date.getTime() / 86_400_000) + 719_162);
}

const TICKS = (h: number, m: number, s: number, fraction: bigint) =>
  BigInt((h * 3600 + m * 60 + s) * 1e7) + fraction;

describe('tedious values through the converters', () => {
  it('turns a DATETIMEOFFSET into its UTC instant, whatever its offset', () => {
    // 2024-03-10 12:30:00.1234567 +02:00 travels as 10:30:00.1234567 UTC and +120 minutes.
    const wire = Buffer.concat([
      Buffer.from([10]),
      littleEndian(TICKS(10, 30, 0, 1_234_567n), 5),
      littleEndian(days(2024, 3, 10), 3),
      littleEndian(120n, 2),
    ]);
    const value = decode('DateTimeOffset', wire, { scale: 7 });
    expect(msSqlTimestamp(value)).toBe(Date.UTC(2024, 2, 10, 10, 30, 0, 123) * 1000 + 456);
  });

  it('reads a DATETIME2 as a UTC wall clock, 100 ns ticks cut to the microsecond', () => {
    const wire = Buffer.concat([
      Buffer.from([8]),
      littleEndian(TICKS(23, 59, 59, 9_999_999n), 5),
      littleEndian(days(1999, 12, 31), 3),
    ]);
    expect(msSqlTimestamp(decode('DateTime2', wire, { scale: 7 }))).toBe(
      Date.UTC(1999, 11, 31, 23, 59, 59, 999) * 1000 + 999,
    );
    const six = Buffer.concat([
      Buffer.from([8]),
      littleEndian(TICKS(16, 46, 3, 9_057_950n) / 10n, 5),
      littleEndian(days(2022, 9, 10), 3),
    ]);
    expect(msSqlTimestamp(decode('DateTime2', six, { scale: 6 }))).toBe(
      Date.UTC(2022, 8, 10, 16, 46, 3, 905) * 1000 + 795,
    );
  });

  it('reads a DATETIME (1/300 s ticks since 1900) as a UTC wall clock', () => {
    const wire = Buffer.concat([
      Buffer.from([8]),
      littleEndian(45_000n, 4), // 45,000 days after 1900-01-01: 2023-03-17
      littleEndian(BigInt(12 * 3600 * 300 + 1), 4), // 12:00:00.003
    ]);
    expect(msSqlTimestamp(decode('DateTimeN', wire))).toBe(
      Date.UTC(2023, 2, 17, 12, 0, 0, 3) * 1000,
    );
  });

  it('reads DATE at both ends of its range', () => {
    const wire = (d: bigint) => Buffer.concat([Buffer.from([3]), littleEndian(d, 3)]);
    expect(msSqlDate(decode('Date', wire(0n)))).toBe('0001-01-01');
    expect(msSqlDate(decode('Date', wire(days(9999, 12, 31))))).toBe('9999-12-31');
    expect(msSqlDate(decode('Date', wire(days(2024, 2, 29))))).toBe('2024-02-29');
  });

  it('reads TIME to the microsecond (the seventh digit cut), and at lower scales', () => {
    const time7 = Buffer.concat([Buffer.from([5]), littleEndian(TICKS(12, 34, 56, 1_234_567n), 5)]);
    expect(msSqlTimeSeconds(decode('Time', time7, { scale: 7 }))).toBe(45296.123456);
    const time3 = Buffer.concat([Buffer.from([4]), littleEndian(45_296_123n, 4)]);
    expect(msSqlTimeSeconds(decode('Time', time3, { scale: 3 }))).toBe(45296.123);
    const time0 = Buffer.concat([Buffer.from([3]), littleEndian(86_399n, 3)]);
    expect(msSqlTimeSeconds(decode('Time', time0, { scale: 0 }))).toBe(86399);
  });

  it('delivers BIGINT as an exact string, so it needs no cast', () => {
    expect(decode('BigInt', littleEndian(2n ** 63n - 1n, 8))).toBe('9223372036854775807');
    expect(decode('BigInt', littleEndian(2n ** 64n - 1n, 8))).toBe('-1');
  });

  it('delivers DECIMAL and MONEY as doubles that lose digits: why the query casts them', () => {
    // decimal(38,10) 12345678901234567890.1234567890: sign byte, then a 16-byte integer.
    const decimal = Buffer.concat([
      Buffer.from([17, 1]),
      littleEndian(123456789012345678901234567890n, 16),
    ]);
    const value = decode('DecimalN', decimal, { precision: 38, scale: 10 });
    expect(typeof value).toBe('number');
    expect(String(value)).not.toBe('12345678901234567890.123456789');
    // money's largest value: high and low 32-bit halves of 9223372036854775807 ten-thousandths.
    const max = 2n ** 63n - 1n;
    const money = Buffer.concat([
      Buffer.from([8]),
      littleEndian(max >> 32n, 4),
      littleEndian(max & 0xffffffffn, 4),
    ]);
    expect(String(decode('MoneyN', money))).not.toBe('922337203685477.5807');
  });
});
