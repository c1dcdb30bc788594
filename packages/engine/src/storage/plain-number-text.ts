import { POWERS_OF_TEN } from './decimal-units.ts';

const ZERO = 48;
const NINE = 57;
const MINUS = 45;
const DOT = 46;
/** Significant digits every double holds and prints back: 10^15 < 2^53. */
const SAFE_DIGITS = 15;

/**
 * The value of `text`, a BIGINT or DECIMAL as the source prints it, when its double is certain to
 * print it back unchanged with `scale` fraction digits (0: an integer); NaN when not certain.
 * Certain: an optional `-`, no leading zero, exactly `scale` fraction digits, at most 15 digits
 * in all. Such a double is within 10^-16 of the value, far from changing a digit, and no integer
 * past 2^53 is among them. Its value is the digits as an integer (exact below 2^53) divided by
 * 10^scale (exact too): one correctly rounded division, the double `Number(text)` gives.
 * A char-code scan instead of `Number` and printing the double: it runs once per value of a
 * snapshot load.
 */
export function plainNumberValue(text: string, scale: number): number {
  const length = text.length;
  const negative = text.charCodeAt(0) === MINUS;
  const first = negative ? 1 : 0;
  let i = first;
  let digits = 0;
  while (i < length) {
    const digit = text.charCodeAt(i) - ZERO;
    if (digit < 0 || digit > NINE - ZERO) break;
    digits = digits * 10 + digit;
    i++;
  }
  const integerDigits = i - first;
  if (integerDigits === 0) return Number.NaN;
  // `0` alone may lead; `-0…` prints back as `0…` (and `007` as `7`).
  if (text.charCodeAt(first) === ZERO && (integerDigits > 1 || negative)) return Number.NaN;
  if (integerDigits + scale > SAFE_DIGITS) return Number.NaN;
  if (scale === 0) {
    if (i !== length) return Number.NaN;
    return negative ? -digits : digits;
  }
  if (text.charCodeAt(i) !== DOT || length - i - 1 !== scale) return Number.NaN;
  for (let j = i + 1; j < length; j++) {
    const digit = text.charCodeAt(j) - ZERO;
    if (digit < 0 || digit > NINE - ZERO) return Number.NaN;
    digits = digits * 10 + digit;
  }
  const value = digits / (POWERS_OF_TEN[scale] as number);
  return negative ? -value : value;
}

/** Whether `plainNumberValue` is certain of `text`. */
export function isPlainNumberText(text: string, scale: number): boolean {
  return !Number.isNaN(plainNumberValue(text, scale));
}
