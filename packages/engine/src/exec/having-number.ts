import type { Condition, Literal } from '@replix/query';
import { EngineError } from '../errors.ts';
import { compareDecimals, type Decimal, decimalKey, parseDecimal } from './exact-decimal.ts';
import type { NumberTest } from './plan.ts';

/**
 * HAVING's tests of the aggregates that are numbers (COUNT, SUM, AVG): the aggregate's value as
 * the answer prints it, compared exactly with the condition's number literals, so `sum_price >
 * 100.005` and `avg_amount = 2.5` hold or fail as the printed digits say, at any precision.
 */

type Leaf = Exclude<Condition, { kind: 'and' | 'or' }>;

const NEVER: NumberTest = () => false;

/**
 * The test of `condition` on aggregate `key`, its literals taken through `resolve` (a cached
 * plan binds another query's literals this way). A literal that is no number is refused: the
 * aggregate is one.
 */
export function numberTest(
  key: string,
  condition: Leaf,
  resolve: (literal: Literal) => Literal,
): NumberTest {
  const number = (literal: Literal): Decimal | null => {
    const resolved = resolve(literal);
    if (resolved.kind === 'null') return null;
    if (resolved.kind !== 'number') {
      throw new EngineError(
        'executor_error',
        `"${key}" is a number: compare it with a number, not a ${resolved.kind}.`,
      );
    }
    // The lexer's numbers are finite decimals: parsing cannot fail.
    return parseDecimal(resolved.text) as Decimal;
  };
  switch (condition.kind) {
    case 'isNull':
      return condition.negated ? (value) => value !== null : (value) => value === null;
    case 'array':
      throw new EngineError(
        'executor_error',
        `${condition.operator} needs an array field; "${key}" is a number.`,
      );
    case 'like':
      throw new EngineError(
        'executor_error',
        `${condition.caseInsensitive ? 'ILIKE' : 'LIKE'} needs a text field; "${key}" is a number.`,
      );
    case 'compare': {
      const literal = number(condition.value);
      if (literal === null) return NEVER;
      const holds = ORDER_TESTS[condition.operator];
      return (value) => value !== null && holds(compareDecimals(value, literal));
    }
    case 'in': {
      const values = new Set<string>();
      for (const literal of condition.values) {
        const value = number(literal);
        if (value !== null) values.add(decimalKey(value));
      }
      return (value) => value !== null && values.has(decimalKey(value));
    }
    case 'between': {
      const low = number(condition.low);
      const high = number(condition.high);
      if (low === null || high === null) return NEVER;
      return (value) =>
        value !== null && compareDecimals(value, low) >= 0 && compareDecimals(value, high) <= 0;
    }
  }
}

/** Whether a comparison's result (negative, zero, positive) passes each operator. */
export const ORDER_TESTS: Readonly<Record<string, (order: number) => boolean>> = {
  '=': (order) => order === 0,
  '!=': (order) => order !== 0,
  '<': (order) => order < 0,
  '<=': (order) => order <= 0,
  '>': (order) => order > 0,
  '>=': (order) => order >= 0,
};
