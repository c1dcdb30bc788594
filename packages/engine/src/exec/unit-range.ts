import type { CompareOperator } from '@replix/query';
import { divideFloor, parseDecimal, powerOfTen } from './exact-decimal.ts';

/**
 * Which values of a DECIMAL column stored as units (storage/decimal-units.ts) pass a comparison
 * with decimal literals, exactly, in units: those with `low ≤ units ≤ high`, or, `negated`,
 * those without. A literal with more decimals than the column bounds by its floor or ceiling
 * (at scale 2, `price > 12.505` is `units ≥ 1251`, `price = 12.505` holds for none).
 */
export interface UnitRange {
  /** Bounds for units that are safe integers (±Infinity when unbounded). */
  readonly low: number;
  readonly high: number;
  /** The same bounds exact, for units past 2^53 (null when unbounded). */
  readonly lowUnits: bigint | null;
  readonly highUnits: bigint | null;
  readonly negated: boolean;
}

/** A literal at `scale`: its floor and ceiling in units (equal when it is a whole number of units). */
function unitBounds(text: string, scale: number): { floor: bigint; ceil: bigint } | null {
  const literal = parseDecimal(text);
  if (literal === null) return null;
  if (literal.scale <= scale) {
    const units = literal.units * powerOfTen(scale - literal.scale);
    return { floor: units, ceil: units };
  }
  const divisor = powerOfTen(literal.scale - scale);
  const floor = divideFloor(literal.units, divisor);
  return { floor, ceil: floor * divisor === literal.units ? floor : floor + 1n };
}

function range(low: bigint | null, high: bigint | null, negated = false): UnitRange {
  return {
    low: low === null ? Number.NEGATIVE_INFINITY : Number(low),
    high: high === null ? Number.POSITIVE_INFINITY : Number(high),
    lowUnits: low,
    highUnits: high,
    negated,
  };
}

/** No value at all: an empty range. */
const EMPTY = range(1n, 0n);

/** `units operator literal` as a range; null when the literal is no finite number. */
export function compareRange(
  operator: CompareOperator,
  text: string,
  scale: number,
): UnitRange | null {
  const bounds = unitBounds(text, scale);
  if (bounds === null) return null;
  const { floor, ceil } = bounds;
  const whole = floor === ceil;
  switch (operator) {
    case '=':
      return whole ? range(floor, floor) : EMPTY;
    case '!=':
      return whole ? range(floor, floor, true) : range(1n, 0n, true);
    case '<':
      return range(null, ceil - 1n);
    case '<=':
      return range(null, floor);
    case '>':
      return range(floor + 1n, null);
    case '>=':
      return range(ceil, null);
  }
}

/** Whether a number literal is a whole number of units at `scale` (true for no finite decimal). */
export function wholeUnits(text: string, scale: number): boolean {
  const bounds = unitBounds(text, scale);
  return bounds === null || bounds.floor === bounds.ceil;
}

/** `units BETWEEN low AND high` as a range; null when a literal is no finite number. */
export function betweenRange(lowText: string, highText: string, scale: number): UnitRange | null {
  const low = unitBounds(lowText, scale);
  const high = unitBounds(highText, scale);
  if (low === null || high === null) return null;
  return range(low.ceil, high.floor);
}

/** Whether exact units (a bigint, past 2^53) pass the range. */
export function inRangeExact(units: bigint, range: UnitRange): boolean {
  const inside =
    (range.lowUnits === null || units >= range.lowUnits) &&
    (range.highUnits === null || units <= range.highUnits);
  return inside !== range.negated;
}

/** Whether some, none or every value in [min, max] (units) passes the range. */
export function rangeVerdictUnits(
  range: UnitRange,
  min: number,
  max: number,
): 'none' | 'all' | 'some' {
  const none = max < range.low || min > range.high || range.low > range.high;
  const all = !none && min >= range.low && max <= range.high;
  if (range.negated) return none ? 'all' : all ? 'none' : 'some';
  return none ? 'none' : all ? 'all' : 'some';
}
