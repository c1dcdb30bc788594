/**
 * The reference's value semantics, written for obviousness rather than speed: canonical source
 * values (see `ColumnType` in src/source-schema.ts) compared exactly, literals converted to
 * canonical values, and the JSON each value becomes (as `JSON.parse` of the engine's text).
 */
import type { Literal } from '@replix/query';
import type { ColumnType } from '../../src/source-schema.ts';

/** An exact rational `numerator / 10^scale`. */
interface Exact {
  readonly numerator: bigint;
  readonly scale: number;
}

/** Parses `-12.340`, `7`, `1e3`, `-2.5E-2` exactly. */
export function exactNumber(text: string): Exact {
  const match = /^(-?)(\d+)(?:\.(\d+))?(?:[eE]([+-]?\d+))?$/.exec(text.trim());
  if (!match) throw new Error(`reference: not a number: ${text}`);
  const [, sign, whole, fraction = '', exponentText = '0'] = match;
  const exponent = Number(exponentText);
  let numerator = BigInt(`${whole}${fraction}`);
  let scale = fraction.length - exponent;
  if (scale < 0) {
    numerator *= 10n ** BigInt(-scale);
    scale = 0;
  }
  return { numerator: sign === '-' ? -numerator : numerator, scale };
}

function compareExact(a: Exact, b: Exact): number {
  const scale = Math.max(a.scale, b.scale);
  const x = a.numerator * 10n ** BigInt(scale - a.scale);
  const y = b.numerator * 10n ** BigInt(scale - b.scale);
  return x < y ? -1 : x > y ? 1 : 0;
}

/** Sum of exact decimal texts, as text. */
export function exactSum(texts: readonly string[]): string {
  let total: Exact = { numerator: 0n, scale: 0 };
  for (const text of texts) {
    const value = exactNumber(text);
    const scale = Math.max(total.scale, value.scale);
    total = {
      numerator:
        total.numerator * 10n ** BigInt(scale - total.scale) +
        value.numerator * 10n ** BigInt(scale - value.scale),
      scale,
    };
  }
  return exactText(total);
}

function exactSumOf(texts: readonly string[]): Exact {
  return exactNumber(exactSum(texts));
}

/** An exact ratio: the sum of exact decimal texts over `divisor` (1 for SUM, the count for AVG). */
export interface ExactRatio {
  readonly sum: Exact;
  readonly divisor: bigint;
}

export function exactRatio(texts: readonly string[], divisor: number): ExactRatio {
  return { sum: exactSumOf(texts), divisor: BigInt(divisor) };
}

/** Compares two exact ratios without rounding (cross-multiplied at one scale). */
export function compareRatios(a: ExactRatio, b: ExactRatio): number {
  const scale = Math.max(a.sum.scale, b.sum.scale);
  const x = a.sum.numerator * 10n ** BigInt(scale - a.sum.scale) * b.divisor;
  const y = b.sum.numerator * 10n ** BigInt(scale - b.sum.scale) * a.divisor;
  return x < y ? -1 : x > y ? 1 : 0;
}

/**
 * The average of exact decimal texts as text with `extraDigits` more decimals than the widest
 * value, rounded half away from zero (docs/instance-api.md, Aggregates).
 */
export function exactAverage(texts: readonly string[], extraDigits: number): string {
  const total = exactSumOf(texts);
  const scaled = total.numerator * 10n ** BigInt(extraDigits);
  const count = BigInt(texts.length);
  const magnitude = scaled < 0n ? -scaled : scaled;
  // Half away from zero: add half the divisor to the magnitude, then truncate.
  const rounded = (2n * magnitude + count) / (2n * count);
  return exactText({
    numerator: scaled < 0n ? -rounded : rounded,
    scale: total.scale + extraDigits,
  });
}

function exactText(value: Exact): string {
  const negative = value.numerator < 0n;
  const digits = (negative ? -value.numerator : value.numerator)
    .toString()
    .padStart(value.scale + 1, '0');
  const text =
    value.scale === 0
      ? digits
      : `${digits.slice(0, digits.length - value.scale)}.${digits.slice(digits.length - value.scale)}`;
  return negative ? `-${text}` : text;
}

/** Code points, compared one by one; a proper prefix sorts first. */
export function compareText(a: string, b: string): number {
  const x = Array.from(a, (c) => c.codePointAt(0) as number);
  const y = Array.from(b, (c) => c.codePointAt(0) as number);
  for (let i = 0; i < Math.min(x.length, y.length); i++) {
    if (x[i] !== y[i]) return (x[i] as number) - (y[i] as number);
  }
  return x.length - y.length;
}

function compareBytes(a: Uint8Array, b: Uint8Array): number {
  for (let i = 0; i < Math.min(a.length, b.length); i++) {
    if (a[i] !== b[i]) return (a[i] as number) - (b[i] as number);
  }
  return a.length - b.length;
}

function sign(n: number): number {
  return n < 0 ? -1 : n > 0 ? 1 : 0;
}

/** Orders two non-NULL canonical values of a column of `type`. */
export function compareValues(type: ColumnType, a: unknown, b: unknown): number {
  switch (type) {
    case 'int':
    case 'bigint':
    case 'decimal':
      return compareExact(exactNumber(String(a)), exactNumber(String(b)));
    case 'float':
    case 'time':
    case 'timestamp':
      return sign((a as number) - (b as number));
    case 'date':
      // `YYYY-MM-DD` with four-digit years sorts as text.
      return sign(compareText(a as string, b as string));
    case 'boolean':
      return (a ? 1 : 0) - (b ? 1 : 0);
    case 'string':
    case 'json':
    case 'array':
      return sign(compareText(a as string, b as string));
    case 'binary':
      return sign(compareBytes(a as Uint8Array, b as Uint8Array));
  }
}

export function hexToBytes(hex: string): Uint8Array {
  const bytes = new Uint8Array(hex.length / 2);
  for (let i = 0; i < bytes.length; i++)
    bytes[i] = Number.parseInt(hex.slice(2 * i, 2 * i + 2), 16);
  return bytes;
}

export function bytesToHex(bytes: Uint8Array): string {
  return Array.from(bytes, (b) => b.toString(16).padStart(2, '0')).join('');
}

/**
 * A query literal as a canonical value of a column of `type`; null for NULL. Throws for a
 * literal of the wrong kind (the property tests only generate fitting ones).
 */
export function literalToCanonical(type: ColumnType, literal: Literal): unknown {
  if (literal.kind === 'null') return null;
  const wrong = () => new Error(`reference: ${literal.kind} literal for a ${type} column`);
  switch (type) {
    case 'int':
    case 'bigint':
    case 'decimal':
      if (literal.kind !== 'number') throw wrong();
      return literal.text;
    case 'float':
    case 'time':
      if (literal.kind !== 'number') throw wrong();
      return Number(literal.text);
    case 'timestamp':
      if (literal.kind !== 'string') throw wrong();
      return referenceMicros(literal.value);
    case 'date':
    case 'string':
    case 'json':
      if (literal.kind !== 'string') throw wrong();
      return literal.value;
    case 'boolean':
      if (literal.kind !== 'boolean') throw wrong();
      return literal.value;
    case 'binary':
      if (literal.kind !== 'string') throw wrong();
      return hexToBytes(literal.value.toLowerCase());
  }
}

/** What a stored value looks like after `JSON.parse` of the engine's response. */
export function valueToJson(type: ColumnType, value: unknown): unknown {
  if (value === null || value === undefined) return null;
  switch (type) {
    case 'int':
    case 'float':
    case 'time':
      return Object.is(value, -0) ? 0 : value;
    case 'bigint':
    case 'decimal':
      return Number(value);
    case 'timestamp':
      return referenceIso(value as number);
    case 'binary':
      return bytesToHex(value as Uint8Array);
    default:
      return value;
  }
}

/**
 * Epoch microseconds of ISO text, by way of `Date.parse` for the milliseconds and the text's
 * fourth to sixth fractional digits for the rest.
 */
export function referenceMicros(text: string): number {
  const digits = /\.(\d+)/.exec(text)?.[1] ?? '';
  const ms = Date.parse(text.replace(/\.\d+/, `.${digits.slice(0, 3).padEnd(3, '0')}`));
  return ms * 1000 + Number(digits.slice(3, 6).padEnd(3, '0'));
}

/** ISO text of epoch microseconds: milliseconds, plus three digits when there are µs. */
export function referenceIso(micros: number): string {
  const sub = ((micros % 1000) + 1000) % 1000;
  const iso = new Date((micros - sub) / 1000).toISOString();
  return sub === 0 ? iso : `${iso.slice(0, -1)}${String(sub).padStart(3, '0')}Z`;
}
