import type { Condition, JsonStep, Literal } from '@replix/query';
import { EngineError } from '../errors.ts';
import { type Comparable, numericComparable } from '../storage/comparable.ts';
import { compareCodePoints } from './code-point-compare.ts';
import { ORDER_TESTS } from './having-number.ts';
import { MALFORMED, scanJsonPath } from './json-scan.ts';
import { compileLike } from './like-pattern.ts';

/**
 * Values inside a JSON column, by path (`data->'address'->'city'`, `tags->0`): read from the
 * stored JSON text, numbers kept with their source digits. The value at a path is missing when
 * a key is absent, an index is past the end, or a step goes into something that is neither an
 * object nor an array; missing and JSON `null` are NULL to filters and sorts. A comparison
 * matches only a value of its literal's type (a number with a number, text with text, a boolean
 * with true or false), so `data->'age' > 30` is false for `"31"`, as in PostgreSQL's jsonb.
 */

/** A JSON number with the digits it was written with, which a double may not keep. */
export class JsonNumber {
  readonly value: number;
  readonly source: string;
  constructor(value: number, source: string) {
    this.value = value;
    this.source = source;
  }
}

/**
 * An object or array found by a path, kept as its stored text: tests match no such value, a
 * sort takes its text, and it is written as it is; never parsed, so no nesting depth costs a
 * stack.
 */
export class JsonComposite {
  readonly text: string;
  constructor(text: string) {
    this.text = text;
  }
}

/** Parsed JSON: numbers as `JsonNumber`; undefined where the text is no JSON. */
export function parseJson(text: string): unknown {
  try {
    return JSON.parse(text, (_key, value, context?: { source?: string }) =>
      typeof value === 'number' ? new JsonNumber(value, context?.source ?? String(value)) : value,
    );
  } catch {
    return undefined;
  }
}

/** The value at `steps` inside `value`; undefined when missing. */
export function jsonAt(value: unknown, steps: readonly JsonStep[]): unknown {
  let current = value;
  for (const step of steps) {
    if (typeof step === 'number') {
      if (!Array.isArray(current) || step >= current.length) return undefined;
      current = current[step];
    } else {
      if (
        current === null ||
        typeof current !== 'object' ||
        Array.isArray(current) ||
        current instanceof JsonNumber ||
        !Object.hasOwn(current, step)
      ) {
        return undefined;
      }
      current = (current as Record<string, unknown>)[step];
    }
  }
  return current;
}

/**
 * The value at `steps` of a stored JSON text; undefined when missing or the text no JSON. The
 * text is scanned to the value (exec/json-scan.ts) and only the value parsed; a text the scan
 * cannot read is parsed whole.
 */
export function jsonValueAt(text: string, steps: readonly JsonStep[]): unknown {
  const span = scanJsonPath(text, steps);
  if (span === MALFORMED) return jsonAt(parseJson(text), steps);
  if (span === null) return undefined;
  return spanValue(text, span.start, span.end);
}

/**
 * The JSON text of the value at `steps`, as stored (an object or array written as the source
 * wrote it, never parsed and written again: no depth of nesting costs a stack); undefined when
 * missing.
 */
export function jsonTextAt(text: string, steps: readonly JsonStep[]): string | undefined {
  const span = scanJsonPath(text, steps);
  if (span === MALFORMED) {
    const value = jsonAt(parseJson(text), steps);
    return value === undefined ? undefined : jsonText(value);
  }
  return span === null ? undefined : text.slice(span.start, span.end);
}

/** `jsonSortValue` of the value at `steps`: objects and arrays by their stored text. */
export function jsonSortValueAt(text: string, steps: readonly JsonStep[]): Comparable | null {
  const span = scanJsonPath(text, steps);
  if (span === MALFORMED) return jsonSortValue(jsonAt(parseJson(text), steps));
  if (span === null) return null;
  const first = text.charCodeAt(span.start);
  if (first === 0x7b || first === 0x5b) return text.slice(span.start, span.end);
  return jsonSortValue(spanValue(text, span.start, span.end));
}

/** The value at `[start, end)` of JSON text: scalars read directly, the rest parsed. */
function spanValue(text: string, start: number, end: number): unknown {
  const code = text.charCodeAt(start);
  if (code === 0x22) {
    const inner = text.slice(start + 1, end - 1);
    return inner.includes('\\') ? JSON.parse(text.slice(start, end)) : inner;
  }
  if (code === 0x2d || (code >= 0x30 && code <= 0x39)) {
    const source = text.slice(start, end);
    return new JsonNumber(Number(source), source);
  }
  if (code === 0x74 && end - start === 4) return true;
  if (code === 0x66 && end - start === 5) return false;
  if (code === 0x6e && end - start === 4) return null;
  if (code === 0x7b || code === 0x5b) return new JsonComposite(text.slice(start, end));
  return parseJson(text.slice(start, end));
}

/** JSON text of a parsed value, numbers with their source digits. */
export function jsonText(value: unknown): string {
  if (value instanceof JsonNumber) return value.source;
  if (value instanceof JsonComposite) return value.text;
  if (Array.isArray(value)) return `[${value.map(jsonText).join(',')}]`;
  if (value !== null && typeof value === 'object') {
    const members = Object.entries(value).map(
      ([key, member]) => `${JSON.stringify(key)}:${jsonText(member)}`,
    );
    return `{${members.join(',')}}`;
  }
  return JSON.stringify(value);
}

/** Missing and JSON null: what only IS NULL matches. */
function isNullish(value: unknown): boolean {
  return value === undefined || value === null;
}

/**
 * The value as ORDER BY sorts it: numbers by value, text by code point, booleans, and arrays and
 * objects by their JSON text; null for missing and JSON null (sorted as NULLs are).
 * `compareSortValues` orders values of different types by type: numbers, text, booleans.
 */
export function jsonSortValue(value: unknown): Comparable | null {
  if (isNullish(value)) return null;
  if (value instanceof JsonNumber) return numericComparable(value.source);
  if (typeof value === 'string' || typeof value === 'boolean') return value;
  if (value instanceof JsonComposite) return value.text;
  return jsonText(value);
}

type Leaf = Exclude<Condition, { kind: 'and' | 'or' }>;

/** A typed test of one literal: false for a value of another type. */
function literalTest(
  literal: Literal,
  path: string,
  order: (comparison: number) => boolean,
  equality: boolean,
): (value: unknown) => boolean {
  switch (literal.kind) {
    case 'null':
      return () => false;
    case 'number': {
      const wanted = numericComparable(literal.text);
      return (value) => {
        if (!(value instanceof JsonNumber)) return false;
        const got = numericComparable(value.source);
        return order(got < wanted ? -1 : got > wanted ? 1 : 0);
      };
    }
    case 'string':
      return (value) =>
        typeof value === 'string' && order(Math.sign(compareCodePoints(value, literal.value)));
    case 'boolean':
      if (!equality) {
        throw new EngineError(
          'executor_error',
          `${path} is compared with a boolean: use = or != only.`,
        );
      }
      return (value) => typeof value === 'boolean' && order(value === literal.value ? 0 : 1);
  }
}

/** The test of `condition` on the value a JSON path reads (undefined: missing). */
export function jsonTest(
  path: string,
  condition: Leaf,
  resolve: (literal: Literal) => Literal,
): (value: unknown) => boolean {
  switch (condition.kind) {
    case 'isNull':
      return condition.negated ? (value) => !isNullish(value) : isNullish;
    case 'compare': {
      const operator = condition.operator;
      return literalTest(
        resolve(condition.value),
        path,
        ORDER_TESTS[operator] as (c: number) => boolean,
        operator === '=' || operator === '!=',
      );
    }
    case 'in': {
      const tests = condition.values.map((value) =>
        literalTest(resolve(value), path, ORDER_TESTS['='] as (c: number) => boolean, true),
      );
      return (value) => tests.some((test) => test(value));
    }
    case 'between': {
      const low = resolve(condition.low);
      const high = resolve(condition.high);
      if (low.kind !== high.kind) {
        throw new EngineError(
          'executor_error',
          `BETWEEN on ${path} needs two bounds of one type; ${low.kind} and ${high.kind} are not.`,
        );
      }
      const above = literalTest(low, path, (c) => c >= 0, false);
      const below = literalTest(high, path, (c) => c <= 0, false);
      return (value) => above(value) && below(value);
    }
    case 'like': {
      const test = compileLike(condition.pattern, condition.caseInsensitive);
      return (value) => typeof value === 'string' && test(value);
    }
    case 'array':
      throw new EngineError(
        'executor_error',
        `${condition.operator} needs an array field; ${path} is a value inside JSON.`,
      );
  }
}

/** `data->'a'->0` as the query writes it, for messages and `meta.query`. */
export function jsonPathText(name: string, steps: readonly JsonStep[]): string {
  return (
    name +
    steps
      .map((step) => (typeof step === 'number' ? `->${step}` : `->'${step.replaceAll("'", "''")}'`))
      .join('')
  );
}

/**
 * The key a selected JSON path has in each row: its last key (`doc->'addr'->'city'` is `city`);
 * a trailing index joins the key before it, or the field's name (`doc->'tags'->0` is `tags_0`).
 */
export function jsonOutputKey(name: string, steps: readonly JsonStep[]): string {
  let index = steps.length - 1;
  const indexes: number[] = [];
  while (index >= 0 && typeof steps[index] === 'number') indexes.unshift(steps[index--] as number);
  const key = index >= 0 ? (steps[index] as string) : name;
  return [key, ...indexes].join('_');
}
