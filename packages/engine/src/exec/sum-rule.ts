import { MAX_UNIT_SCALE } from '../storage/decimal-units.ts';
import type { PlanAggregate } from './plan.ts';

/**
 * How an aggregate adds its column's values:
 * - `count`: it adds none (COUNT, MIN, MAX);
 * - `float`: as doubles (FLOAT, DOUBLE, TIME), as the sources do;
 * - `integer`: exactly (INT, BIGINT), as integers in a double while they stay below 2^53;
 * - `scaled`: exactly (DECIMAL with a declared scale of at most 22), as integer counts of
 *   10^-scale in a double while they stay below 2^53: the units a DECIMAL chunk stores
 *   (storage/decimal-units.ts), added as they are;
 * - `decimal`: exactly (unconstrained NUMERIC, or a larger scale), integer values in a double
 *   while they can, every other value as a bigint.
 *
 * `unitScale` is the scale of the integer units the double holds; `outputScale` the declared
 * scale a SUM prints with (PostgreSQL's unconstrained NUMERIC has none: its sum takes the
 * largest scale among the values, as PostgreSQL does).
 */
export type SumRule =
  | { readonly kind: 'count' | 'float' | 'integer'; readonly unitScale: 0 }
  | {
      readonly kind: 'scaled';
      readonly unitScale: number;
      readonly outputScale: number;
      /** 10^unitScale, exact as a double up to 10^22. */
      readonly factor: number;
    }
  | { readonly kind: 'decimal'; readonly unitScale: 0; readonly outputScale: number | undefined };

export function sumRule(aggregate: PlanAggregate): SumRule {
  const column = aggregate.column;
  // COUNT, MIN and MAX add nothing.
  if ((aggregate.fn !== 'SUM' && aggregate.fn !== 'AVG') || column === null) {
    return { kind: 'count', unitScale: 0 };
  }
  switch (column.type) {
    case 'int':
    case 'bigint':
      return { kind: 'integer', unitScale: 0 };
    case 'decimal': {
      // PostgreSQL 15 allows a negative scale: its values are integers.
      const scale = column.scale === undefined ? undefined : Math.max(0, column.scale);
      if (scale === undefined || scale > MAX_UNIT_SCALE) {
        return { kind: 'decimal', unitScale: 0, outputScale: scale };
      }
      return { kind: 'scaled', unitScale: scale, outputScale: scale, factor: 10 ** scale };
    }
    default:
      return { kind: 'float', unitScale: 0 };
  }
}
