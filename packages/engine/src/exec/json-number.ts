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

/**
 * Writes `formatUnits(units, scale)` (storage/decimal-units.ts) at `at` and returns the end: a
 * DECIMAL's count of 10^-scale units (a safe integer), scale 0..22, as its digits with the point
 * `scale` digits from the right, a zero before a point with nothing in front. At most 25 bytes.
 */
export function writeUnits(target: Uint8Array, at: number, units: number, scale: number): number {
  let start = at;
  let magnitude = units;
  if (units < 0) {
    target[start++] = 0x2d;
    magnitude = -units;
  }
  if (scale === 0) return writeDigits(target, start, magnitude);
  const power = POWERS[scale] as number;
  // Exact: the remainder of two integers, and the quotient of a multiple of `power` by it.
  const fraction = magnitude % power;
  const end = writeDigits(target, start, (magnitude - fraction) / power);
  target[end] = 0x2e;
  return writePadded(target, end + 1, fraction, scale);
}

/** Day numbers of 0000-03-01 and 10000-01-01: `writeCivilDate` writes the days in between. */
const FIRST_WRITTEN_DAY = -719468;
const END_WRITTEN_DAY = 2932897;

/**
 * Writes `"YYYY-MM-DD"` (quotes included: `civilFromDays`'s text as a JSON string) for a whole
 * day number from 0000-03-01 to 9999-12-31 at `at`, and returns the end (12 bytes on); returns
 * -1, writing nothing, for any other number (its text then has a sign or more digits).
 */
export function writeCivilDate(target: Uint8Array, at: number, days: number): number {
  if (!(days >= FIRST_WRITTEN_DAY && days < END_WRITTEN_DAY) || (days | 0) !== days) return -1;
  // `civilFromDays` (storage/civil-date.ts) in 32-bit integers: every term is non-negative.
  const z = days + 719468;
  const era = (z / 146097) | 0;
  const dayOfEra = z - era * 146097;
  const yearOfEra =
    ((dayOfEra - ((dayOfEra / 1460) | 0) + ((dayOfEra / 36524) | 0) - ((dayOfEra / 146096) | 0)) /
      365) |
    0;
  const dayOfYear = dayOfEra - (365 * yearOfEra + ((yearOfEra / 4) | 0) - ((yearOfEra / 100) | 0));
  const mp = ((5 * dayOfYear + 2) / 153) | 0;
  const day = dayOfYear - (((153 * mp + 2) / 5) | 0) + 1;
  const month = mp < 10 ? mp + 3 : mp - 9;
  const year = yearOfEra + era * 400 + (month <= 2 ? 1 : 0);
  const century = (year / 100) | 0;
  target[at] = 0x22;
  writePair(target, at + 1, century);
  writePair(target, at + 3, year - century * 100);
  target[at + 5] = 0x2d;
  writePair(target, at + 6, month);
  target[at + 8] = 0x2d;
  writePair(target, at + 9, day);
  target[at + 11] = 0x22;
  return at + 12;
}

/** Two digits of `value` (0..99) at `at`. */
function writePair(target: Uint8Array, at: number, value: number): void {
  target[at] = PAIRS[value << 1] as number;
  target[at + 1] = PAIRS[(value << 1) + 1] as number;
}

const MICROS_PER_DAY = 86_400_000_000;

/**
 * Writes `"…"` around `timestampText(micros, fractionDigits)` (storage/civil-date.ts) at `at`
 * for a safe integer count of epoch microseconds (the years 1685..2255), and returns the end;
 * returns -1, writing nothing, for any other number.
 */
export function writeTimestamp(
  target: Uint8Array,
  at: number,
  micros: number,
  fractionDigits: 3 | 6,
): number {
  if (!Number.isSafeInteger(micros)) return -1;
  const days = Math.floor(micros / MICROS_PER_DAY);
  // Exact: both terms are integers and the difference is below 2^37.
  const ofDay = micros - days * MICROS_PER_DAY;
  const seconds = Math.floor(ofDay / 1_000_000);
  const fraction = ofDay - seconds * 1_000_000;
  const dateEnd = writeCivilDate(target, at, days);
  if (dateEnd < 0) return -1;
  // The date's closing quote becomes the `T`.
  let i = dateEnd - 1;
  target[i] = 0x54;
  const hours = (seconds / 3600) | 0;
  const minutes = ((seconds / 60) | 0) - hours * 60;
  writePair(target, i + 1, hours);
  target[i + 3] = 0x3a;
  writePair(target, i + 4, minutes);
  target[i + 6] = 0x3a;
  writePair(target, i + 7, seconds - hours * 3600 - minutes * 60);
  target[i + 9] = 0x2e;
  i =
    fractionDigits === 6
      ? writePadded(target, i + 10, fraction, 6)
      : writePadded(target, i + 10, (fraction / 1000) | 0, 3);
  target[i] = 0x5a;
  target[i + 1] = 0x22;
  return i + 2;
}
