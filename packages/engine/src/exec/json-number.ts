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

/** Writes the digits of a non-negative integer below 2^53 at `at`; returns the end. */
export function writeDigits(target: Uint8Array, at: number, value: number): number {
  if (value < SMALL) return writeSmall(target, at, value | 0);
  const high = Math.floor(value / SMALL);
  const end = writeSmall(target, at, high);
  return writePadded(target, end, value - high * SMALL, 9);
}

function writeSmall(target: Uint8Array, at: number, value: number): number {
  let digits = 1;
  for (let rest = value; rest >= 10; rest = (rest / 10) | 0) digits++;
  return writePadded(target, at, value, digits);
}

/** `value` in exactly `digits` digits, zeros in front. */
function writePadded(target: Uint8Array, at: number, value: number, digits: number): number {
  let rest = value;
  for (let i = at + digits - 1; i >= at; i--) {
    const next = Math.floor(rest / 10);
    target[i] = 0x30 + (rest - next * 10);
    rest = next;
  }
  return at + digits;
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
