/** An exact decimal number: `units × 10^-scale`. */
export interface Decimal {
  readonly units: bigint;
  readonly scale: number;
}

const DECIMAL_TEXT = /^([+-]?)(\d*)(?:\.(\d*))?(?:[eE]([+-]?\d{1,4}))?$/;

/**
 * The exact value of a decimal text (`-12.50`, `1e+21`), keeping its scale (`1.50` has scale
 * 2, as PostgreSQL counts it); null for text that is no finite number (`NaN`, `Infinity`).
 */
export function parseDecimal(text: string): Decimal | null {
  const match = DECIMAL_TEXT.exec(text);
  if (match === null) return null;
  const whole = match[2] ?? '';
  const fraction = match[3] ?? '';
  if (whole === '' && fraction === '') return null;
  let units = BigInt(whole + fraction);
  let scale = fraction.length - Number(match[4] ?? 0);
  if (scale < 0) {
    units *= powerOfTen(-scale);
    scale = 0;
  }
  return { units: match[1] === '-' ? -units : units, scale };
}

/** `a` compared with `b`: negative, zero or positive, exactly. */
export function compareDecimals(a: Decimal, b: Decimal): number {
  const scale = Math.max(a.scale, b.scale);
  const x = rescale(a.units, a.scale, scale);
  const y = rescale(b.units, b.scale, scale);
  return x < y ? -1 : x > y ? 1 : 0;
}

/** One text per number, whatever its scale: `2.50` and `2.5` give the same (sets' keys). */
export function decimalKey(value: Decimal): string {
  let { units, scale } = value;
  while (scale > 0 && units % 10n === 0n) {
    units /= 10n;
    scale--;
  }
  return `${units}e-${scale}`;
}

/** `units × 10^-scale` as plain decimal text with exactly `scale` fractional digits. */
export function formatDecimal(units: bigint, scale: number): string {
  const negative = units < 0n;
  const digits = (negative ? -units : units).toString();
  if (scale <= 0) return negative ? `-${digits}` : digits;
  const padded = digits.padStart(scale + 1, '0');
  const text = `${padded.slice(0, -scale)}.${padded.slice(-scale)}`;
  return negative ? `-${text}` : text;
}

const POWERS: bigint[] = [1n];

/** 10^exponent as a bigint (exponent ≥ 0), cached for the small exponents sums use. */
export function powerOfTen(exponent: number): bigint {
  if (exponent < 64) {
    for (let i = POWERS.length; i <= exponent; i++) POWERS.push((POWERS[i - 1] as bigint) * 10n);
    return POWERS[exponent] as bigint;
  }
  return 10n ** BigInt(exponent);
}

/** `units` at scale `from` expressed at the larger or equal scale `to`. */
export function rescale(units: bigint, from: number, to: number): bigint {
  return to === from ? units : units * powerOfTen(to - from);
}

/** numerator ÷ denominator (> 0) rounded half away from zero, as MySQL and PostgreSQL round. */
export function divideRounded(numerator: bigint, denominator: bigint): bigint {
  const quotient = numerator / denominator;
  const remainder = numerator % denominator;
  const twice = 2n * (remainder < 0n ? -remainder : remainder);
  if (twice < denominator) return quotient;
  return numerator < 0n ? quotient - 1n : quotient + 1n;
}

/** ⌊numerator ÷ denominator⌋ for a denominator > 0: monotonic, unlike BigInt's truncation. */
export function divideFloor(numerator: bigint, denominator: bigint): bigint {
  const quotient = numerator / denominator;
  return numerator < 0n && quotient * denominator !== numerator ? quotient - 1n : quotient;
}

/**
 * A running exact sum: units at the largest scale added so far. A value that is no finite
 * number (PostgreSQL's `NaN` and `Infinity` numerics) makes the sum one too, kept apart.
 */
export class ExactSum {
  units = 0n;
  scale: number;
  /** 0 while every value was finite; otherwise the double sum of the non-finite ones. */
  nonFinite = 0;

  constructor(scale: number) {
    this.scale = scale;
  }

  add(units: bigint, scale: number): void {
    if (scale > this.scale) {
      this.units = rescale(this.units, this.scale, scale) + units;
      this.scale = scale;
    } else this.units += rescale(units, scale, this.scale);
  }
}
