import type { Canonical } from './canonical-value.ts';
import { isExactQuotient } from './exact-quotient.ts';

const FRACTION = /^-?\d+(\.\d+)?\/\d+$/;

/**
 * Where a served answer differs from the expected one, as `path: expected …, served …` lines;
 * empty when equal. An expected `sum/count` fraction matches a served AVG that is the exact
 * quotient at its scale (`isExactQuotient`).
 */
export function answerDifferences(expected: Canonical, served: Canonical, path = ''): string[] {
  if (typeof expected === 'string' && FRACTION.test(expected) && typeof served === 'string') {
    return isExactQuotient(served, expected)
      ? []
      : [`${path}: expected the quotient ${expected}, served ${served}`];
  }
  if (Array.isArray(expected) && Array.isArray(served)) {
    const lines =
      expected.length === served.length
        ? []
        : [`${path}: expected ${expected.length} rows, served ${served.length}`];
    const length = Math.min(expected.length, served.length);
    for (let i = 0; i < length && lines.length < 5; i++) {
      lines.push(...answerDifferences(expected[i] ?? null, served[i] ?? null, `${path}[${i}]`));
    }
    return lines;
  }
  if (isObject(expected) && isObject(served)) {
    const keys = new Set([...Object.keys(expected), ...Object.keys(served)]);
    return [...keys].flatMap((key) => {
      if (!(key in served)) return [`${path}.${key}: missing from the served answer`];
      if (!(key in expected)) return [`${path}.${key}: served but not expected`];
      return answerDifferences(expected[key] ?? null, served[key] ?? null, `${path}.${key}`);
    });
  }
  return JSON.stringify(expected) === JSON.stringify(served)
    ? []
    : [`${path}: expected ${JSON.stringify(expected)}, served ${JSON.stringify(served)}`];
}

function isObject(value: Canonical): value is { [key: string]: Canonical } {
  return typeof value === 'object' && value !== null && !Array.isArray(value);
}
