/**
 * Numbers written as UTF-8 digits straight into a byte array, without the string `String(n)`
 * makes (~150 ns for a double with decimals): the text is exactly `String(n)`'s, or the
 * function declines and the caller writes `String(n)` itself.
 */

/** Longest text `writeNumber` writes: a sign, 16 digits, a point and 6 leading zeros. */
export const MAX_NUMBER_BYTES = 32;

/** Below this, an integer's digits are written with 32-bit arithmetic. */
const SMALL = 1_000_000_000;
/**
 * The largest scaled value the shortest-digits search trusts: `fl(v * 10^k)` is then within
 * 1/4 of the decimal it must round to (see `writeNumber`).
 */
const SCALED_LIMIT = 2 ** 50;
const POWERS = Array.from({ length: 23 }, (_, k) => 10 ** k);

/** "00" to "99", two bytes each: digits are written two at a time. */
const PAIRS = Uint8Array.from({ length: 200 }, (_, i) =>
  i % 2 === 0 ? 0x30 + Math.floor(i / 20) : 0x30 + (((i - 1) / 2) % 10),
);

/** Writes the digits of a non-negative integer below 2^53 at `at`; returns the end. */
export function writeDigits(target: Uint8Array, at: number, value: number): number {
  if (value < SMALL) return writePadded(target, at, value, digitCount(value));
  const high = Math.floor(value / SMALL);
  const end = writePadded(target, at, high, digitCount(high));
  return writePadded(target, end, value - high * SMALL, 9);
}

/** Digits of a non-negative integer below 10^9. */
function digitCount(value: number): number {
  if (value < 10_000) return value < 10 ? 1 : value < 100 ? 2 : value < 1000 ? 3 : 4;
  if (value < 1_000_000) return value < 100_000 ? 5 : 6;
  return value < 10_000_000 ? 7 : value < 100_000_000 ? 8 : 9;
}

/** `value` (an integer below 2^53) in exactly `digits` digits, zeros in front. */
export function writePadded(target: Uint8Array, at: number, value: number, digits: number): number {
  let rest = value;
  let i = at + digits;
  // Eight digits at a time while the rest is past 32-bit arithmetic.
  while (rest >= SMALL) {
    const high = Math.floor(rest / 100_000_000);
    writeInt(target, i - 8, rest - high * 100_000_000, i);
    i -= 8;
    rest = high;
  }
  writeInt(target, at, rest | 0, i);
  return at + digits;
}

/** Fills `target[from, end)` with the low digits of `value` (below 2^31), zeros in front. */
function writeInt(target: Uint8Array, from: number, value: number, end: number): void {
  let rest = value;
  let i = end;
  while (i - from >= 2) {
    const next = (rest / 100) | 0;
    const pair = (rest - next * 100) << 1;
    target[--i] = PAIRS[pair + 1] as number;
    target[--i] = PAIRS[pair] as number;
    rest = next;
  }
  if (i > from) target[--i] = 0x30 + (rest % 10);
}

/**
 * Writes `String(value)` at `at` and returns the end, for a finite number that is an integer
 * below 2^53 in magnitude or lies in [1e-6, 2^50) with a short decimal expansion (the values a
 * column of prices, amounts or scores holds); returns -1, writing nothing, for any other.
 *
 * For a non-integer, the fewest fraction digits k whose decimal reads back as `value` are
 * those of `String(value)` (ECMAScript's Number::toString: fewest significant digits, then the
 * closest; below 1e21 and from 1e-6 up it is written without exponent). The one candidate
 * with k digits is m = round(value * 10^k): while value * 10^k < 2^50, a decimal that reads
 * back is within value * 10^k * 2^-53 of the exact product and the rounded product is too, so
 * m is it when it exists; and m / 10^k, both exact, divides to the double that decimal reads
 * as (IEEE division rounds correctly, as parsing does).
 */
export function writeNumber(target: Uint8Array, at: number, value: number): number {
  let magnitude = value;
  let start = at;
  if (value < 0) {
    magnitude = -value;
    target[start++] = 0x2d;
  }
  if (Number.isInteger(magnitude) && magnitude < 2 ** 53) {
    // -0 is written "0", as String(-0) is.
    if (magnitude === 0) start = at;
    return writeDigits(target, start, magnitude);
  }
  if (!(magnitude >= 1e-6)) return -1;
  for (let k = 1; k < POWERS.length; k++) {
    const power = POWERS[k] as number;
    const scaled = magnitude * power;
    if (scaled >= SCALED_LIMIT) return -1;
    const m = Math.round(scaled);
    if (m / power !== magnitude) continue;
    if (magnitude >= 1) {
      const whole = Math.floor(m / power);
      const end = writeDigits(target, start, whole);
      target[end] = 0x2e;
      return writePadded(target, end + 1, m - whole * power, k);
    }
    target[start] = 0x30;
    target[start + 1] = 0x2e;
    return writePadded(target, start + 2, m, k);
  }
  return -1;
}
