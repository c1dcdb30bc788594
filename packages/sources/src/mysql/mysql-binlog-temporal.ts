import { daysFromCivil, epochMicros } from '@replix/engine';
import { secondsFromMicros } from '../temporal-text.ts';

/**
 * Decoders for the binlog's own encodings of temporal values (MySQL 5.6+ `TIME2`, `DATETIME2`,
 * `TIMESTAMP2` and the classic `TIME`), straight to canonical forms. zongji's decoding of
 * these is not used: it gets negative TIME values wrong whenever the seconds carry
 * (`-01:00:00` comes out as `-00:63:64`), and reads TIMESTAMP seconds as signed.
 * Layouts follow MySQL's `my_time_packed_from_binary` and friends (mysys/my_time.cc).
 */

const INT_PART = 2 ** 24; // a packed value is (integer part << 24) + microseconds

/** Bytes of a fractional-second part with `fsp` digits. */
export function fractionBytes(fsp: number): number {
  return Math.ceil(fsp / 2);
}

function unsignedBE(bytes: Uint8Array, start: number, length: number): number {
  let value = 0;
  for (let i = start; i < start + length; i++) value = value * 256 + bytes[i]!;
  return value;
}

/** Microseconds per stored unit: 1-2 digits are stored in hundredths, 3-4 in 1/10000ths. */
function fractionScale(length: number): number {
  return length === 1 ? 10_000 : length === 2 ? 100 : 1;
}

/** The (unsigned) fraction of a DATETIME or TIMESTAMP with `fsp` digits, in microseconds. */
function microseconds(bytes: Uint8Array, start: number, fsp: number): number {
  const length = fractionBytes(fsp);
  return unsignedBE(bytes, start, length) * fractionScale(length);
}

/** TIME(fsp): 3 bytes of `0x800000 + integer part`, then the fraction; seconds, signed. */
export function decodeTime2(bytes: Uint8Array, fsp: number): number {
  const length = fractionBytes(fsp);
  // 5-6 digits: the 6 bytes are one number, `0x800000000000 + packed`.
  if (length === 3) return fromPackedTime(unsignedBE(bytes, 0, 6) - 0x8000_0000_0000);
  let integer = unsignedBE(bytes, 0, 3) - 0x80_0000;
  let fraction = unsignedBE(bytes, 3, length);
  // A negative value with a fraction stores its fraction counted down from the next whole
  // second, so that the bytes sort in value order.
  if (integer < 0 && fraction !== 0) {
    integer++;
    fraction -= 256 ** length;
  }
  return fromPackedTime(integer * INT_PART + fraction * fractionScale(length));
}

/** A packed TIME, `(h << 12 | m << 6 | s) << 24 | µs` of the magnitude, to signed seconds. */
function fromPackedTime(packed: number): number {
  const magnitude = Math.abs(packed);
  const hms = Math.floor(magnitude / INT_PART);
  const micros = magnitude % INT_PART;
  const hours = Math.floor(hms / 4096) % 1024;
  const minutes = Math.floor(hms / 64) % 64;
  const seconds = hms % 64;
  // The same arithmetic as parsing `HHH:MM:SS.ffffff`, so both give the identical double.
  const value = (hours * 3600 + minutes * 60 + seconds) * 1_000_000 + micros;
  return secondsFromMicros(packed < 0 ? -value : value);
}

/** Classic TIME: a 3-byte little-endian signed integer `±HHMMSS`; seconds. */
export function decodeClassicTime(bytes: Uint8Array): number {
  let value = bytes[0]! | (bytes[1]! << 8) | (bytes[2]! << 16);
  if (value & 0x80_0000) value -= 0x100_0000;
  const magnitude = Math.abs(value);
  const seconds =
    Math.floor(magnitude / 10_000) * 3600 +
    (Math.floor(magnitude / 100) % 100) * 60 +
    (magnitude % 100);
  return value < 0 ? -seconds : seconds;
}

/**
 * DATETIME(fsp): 5 bytes of `0x8000000000 + (year*13+month) << 22 | day << 17 | h << 12 |
 * m << 6 | s`, then the fraction. A wall clock read as UTC, in epoch microseconds; null for
 * zero dates, which name no instant.
 */
export function decodeDatetime2(bytes: Uint8Array, fsp: number): number | null {
  const integer = unsignedBE(bytes, 0, 5) - 0x80_0000_0000;
  const ymd = Math.floor(integer / 2 ** 17);
  const hms = integer % 2 ** 17;
  const day = ymd % 32;
  const yearMonth = Math.floor(ymd / 32);
  const month = yearMonth % 13;
  const year = Math.floor(yearMonth / 13);
  if (month === 0 || day === 0) return null;
  const hours = Math.floor(hms / 4096);
  const minutes = Math.floor(hms / 64) % 64;
  const seconds = hms % 64;
  return epochMicros(
    daysFromCivil(year, month, day),
    hours * 3600 + minutes * 60 + seconds,
    microseconds(bytes, 5, fsp),
  );
}

/**
 * TIMESTAMP(fsp): 4 bytes of big-endian unsigned epoch seconds, then the fraction; epoch
 * microseconds, or null for the zero timestamp.
 */
export function decodeTimestamp2(bytes: Uint8Array, fsp: number): number | null {
  const seconds = unsignedBE(bytes, 0, 4);
  const micros = microseconds(bytes, 4, fsp);
  if (seconds === 0 && micros === 0) return null;
  return epochMicros(0, seconds, micros);
}
