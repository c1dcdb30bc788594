import type { ColumnType } from '../source-schema.ts';

/*
 * A DECIMAL(p,s) column with a declared scale is stored as scaled integers: each value as its
 * count of 10^-s units (`12.50` at scale 2 is 1250) in a Float64Array, exact while the count is
 * a safe integer (below 2^53: every value of p ≤ 15, most of p 16..18). Filters, sorts, zone
 * maps and sums then work on plain integers in doubles: no per-row multiply and round, no
 * BigInt. Measured (bench/decimal-layouts.ts) against a BigInt64Array of the same units, whose
 * every read as a number allocates (a top-K's scores 12× slower), two Int32Array words (twice
 * as slow on every loop), and the value's nearest double (sums 2× slower, rounding per row).
 * A value whose units are no safe integer, or whose text is not the units' canonical text,
 * keeps its source text beside (`DecimalChunk.exact`) and takes the exact, slower paths.
 */

/** Above 10^22, powers of ten are no longer exact doubles. */
export const MAX_UNIT_SCALE = 22;

/** 10^i, exact, for i in 0..MAX_UNIT_SCALE. */
export const POWERS_OF_TEN = Float64Array.from({ length: MAX_UNIT_SCALE + 1 }, (_, i) => 10 ** i);

/**
 * The scale of the units a column of this type and declared scale is stored in (0 for
 * PostgreSQL's negative scales, whose values are integers); undefined for every other column
 * (not a DECIMAL, an unconstrained NUMERIC, or a scale past 22).
 */
export function unitScaleOf(type: ColumnType, scale: number | undefined): number | undefined {
  if (type !== 'decimal' || scale === undefined) return undefined;
  return Number.isInteger(scale) && scale <= MAX_UNIT_SCALE ? Math.max(0, scale) : undefined;
}

const CANONICAL = /^-?\d+(?:\.\d+)?$/;

/**
 * The units of a canonical decimal text (`-12.5`, `7`) at `scale`; NaN when it has more
 * fractional digits than the scale, is no plain decimal (`NaN`, `1e5`), or its units are no
 * safe integer.
 */
export function parseUnits(text: string, scale: number): number {
  if (!CANONICAL.test(text)) return Number.NaN;
  const dot = text.indexOf('.');
  const fraction = dot < 0 ? 0 : text.length - dot - 1;
  if (fraction > scale) return Number.NaN;
  const digits = dot < 0 ? Number(text) : Number(text.slice(0, dot) + text.slice(dot + 1));
  // A product of exact integers is exact while it stays a safe integer; + 0 turns -0 into 0.
  const units = digits * (POWERS_OF_TEN[scale - fraction] as number) + 0;
  return Number.isSafeInteger(units) ? units : Number.NaN;
}

/**
 * The units a chunk stores for `text` at `scale`: `parseUnits`, but NaN unless `text` is the
 * units' canonical text (`formatUnits`), so that the stored units give back the source's digits.
 */
export function storedUnits(text: string, scale: number): number {
  const dot = text.indexOf('.');
  if (scale === 0 ? dot >= 0 : dot !== text.length - scale - 1) return Number.NaN;
  const units = parseUnits(text, scale);
  const start = text.charCodeAt(0) === MINUS ? 1 : 0;
  // A leading zero (`012.50`) or a negative zero (`-0.00`) is no canonical text.
  if (text.charCodeAt(start) === ZERO && dot !== start + 1 && text.length > start + 1)
    return Number.NaN;
  return units === 0 && start === 1 ? Number.NaN : units;
}

const MINUS = 45;
const ZERO = 48;

/** The canonical text of `units` (a safe integer) at `scale`: `formatUnits(1250, 2)` is `12.50`. */
export function formatUnits(units: number, scale: number): string {
  if (scale === 0) return String(units);
  const negative = units < 0;
  let digits = String(negative ? -units : units);
  if (digits.length <= scale) digits = '0'.repeat(scale + 1 - digits.length) + digits;
  const cut = digits.length - scale;
  const text = `${digits.slice(0, cut)}.${digits.slice(cut)}`;
  return negative ? `-${text}` : text;
}

/** The nearest double of `units` at `scale`: the value's double (one correctly rounded division). */
export function unitsValue(units: number, scale: number): number {
  return units / (POWERS_OF_TEN[scale] as number);
}
