const ZERO = 48;
const NINE = 57;
const MINUS = 45;
const DOT = 46;
/** Significant digits every double holds and prints back: 10^15 < 2^53. */
const SAFE_DIGITS = 15;

/**
 * Whether `text`, a BIGINT or DECIMAL as the source prints it, is certain to come back unchanged
 * from its double printed with `scale` fraction digits (0: an integer): an optional `-`, no
 * leading zero, exactly `scale` fraction digits, at most 15 digits in all. Such a double is
 * within 10^-16 of the value, far from changing a digit, and no integer past 2^53 is among them.
 * A char-code scan instead of printing the double: it runs once per value of a snapshot load.
 * False means only "not certain": the caller compares the printed text.
 */
export function isPlainNumberText(text: string, scale: number): boolean {
  const length = text.length;
  let i = text.charCodeAt(0) === MINUS ? 1 : 0;
  const first = i;
  while (i < length) {
    const code = text.charCodeAt(i);
    if (code < ZERO || code > NINE) break;
    i++;
  }
  const integerDigits = i - first;
  if (integerDigits === 0) return false;
  // `0` alone may lead; `-0…` prints back as `0…` (and `007` as `7`).
  if (text.charCodeAt(first) === ZERO && (integerDigits > 1 || first === 1)) return false;
  if (scale === 0) return i === length && integerDigits <= SAFE_DIGITS;
  if (text.charCodeAt(i) !== DOT || length - i - 1 !== scale) return false;
  if (integerDigits + scale > SAFE_DIGITS) return false;
  for (let j = i + 1; j < length; j++) {
    const code = text.charCodeAt(j);
    if (code < ZERO || code > NINE) return false;
  }
  return true;
}
