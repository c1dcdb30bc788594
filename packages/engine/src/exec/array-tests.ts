import type { ArrayOperator, Condition, Literal } from '@replix/query';
import { EngineError } from '../errors.ts';
import type { CompiledColumn } from '../schema/compiled-schema.ts';
import type { ElementType } from '../source-schema.ts';
import { parseCivilDate, parseIsoTimestamp } from '../storage/civil-date.ts';
import { type Comparable, numericComparable } from '../storage/comparable.ts';
import { decimalKey, parseDecimal } from './exact-decimal.ts';
import { numberTest } from './having-number.ts';
import { JsonNumber, parseJson } from './json-path.ts';
import { literalValue } from './literal-value.ts';

/**
 * Tests of a PostgreSQL array column, on the JSON text it is stored and served as: CONTAINS,
 * CONTAINED BY and OVERLAPS (`@>`, `<@`, `&&`) against a list, and CARDINALITY (the number of
 * elements of every dimension). Elements compare by their element type's rules, as their
 * literals do in a filter: numbers by value (DECIMALs exactly), dates and timestamps in time,
 * text exactly; a NULL element equals nothing, as in PostgreSQL.
 */

/** Elements of more dimensions than this are refused: JSON.parse would recurse that deep. */
const MAX_DEPTH = 64;

/** An element's key: equal keys, equal elements (`decimalKey` for DECIMALs). */
type ElementKey = Comparable;

/** An element's key from its parsed value (`parseJson`: numbers keep their source digits). */
function elementKey(type: ElementType, value: unknown): ElementKey | null {
  if (value === null) return null;
  const text = value instanceof JsonNumber ? value.source : String(value);
  switch (type) {
    case 'bigint':
      return numericComparable(text);
    case 'decimal': {
      const exact = parseDecimal(text);
      return exact === null ? null : decimalKey(exact);
    }
    case 'int':
    case 'float':
    case 'time':
      return Number(text);
    case 'boolean':
      return value === true;
    case 'date':
      return parseCivilDate(text) ?? null;
    case 'timestamp':
      return parseIsoTimestamp(text) ?? null;
    default:
      return text;
  }
}

/**
 * The elements of an array's JSON text, flattened over its dimensions, each as its key (null
 * for a NULL element); null for text that is no array.
 */
export function arrayElements(text: string, type: ElementType): (ElementKey | null)[] | null {
  const parsed = parseJson(text);
  if (!Array.isArray(parsed)) return null;
  const keys: (ElementKey | null)[] = [];
  const visit = (items: readonly unknown[], depth: number) => {
    if (depth > MAX_DEPTH) return;
    for (const item of items) {
      if (Array.isArray(item)) visit(item, depth + 1);
      else keys.push(elementKey(type, item));
    }
  };
  visit(parsed, 1);
  return keys;
}

/** A literal of the list as an element's key: converted as a filter on the element type does. */
function literalKey(element: CompiledColumn, literal: Literal): ElementKey | null {
  if (literal.kind === 'null') return null;
  if (element.type === 'decimal' && literal.kind === 'number') {
    return decimalKey(parseDecimal(literal.text) as NonNullable<ReturnType<typeof parseDecimal>>);
  }
  return literalValue(element, literal);
}

/** The element type a column of arrays holds, as a column of its own for literal conversion. */
function elementColumn(column: CompiledColumn): CompiledColumn {
  return { ...column, type: column.elementType ?? 'string', elementType: undefined };
}

/** `tags CONTAINS ('a', 'b')` and its kin, as a test of an array's JSON text. */
export function listTest(
  column: CompiledColumn,
  operator: ArrayOperator,
  values: readonly Literal[],
  resolve: (literal: Literal) => Literal,
): (text: string) => boolean {
  const element = elementColumn(column);
  const type = element.type as ElementType;
  const keys = values.map((value) => literalKey(element, resolve(value)));
  const listed = new Set(keys.filter((key) => key !== null));
  // A NULL in the list equals no element: an array cannot contain it.
  if (operator === 'CONTAINS' && keys.includes(null)) return () => false;
  return (text) => {
    const elements = arrayElements(text, type);
    if (elements === null) return false;
    switch (operator) {
      case 'CONTAINS': {
        const present = new Set(elements);
        for (const key of listed) if (!present.has(key)) return false;
        return true;
      }
      case 'CONTAINED BY':
        return elements.every((key) => key !== null && listed.has(key));
      case 'OVERLAPS':
        return elements.some((key) => key !== null && listed.has(key));
    }
  };
}

/** `CARDINALITY(tags) > 2` and its kin (not IS NULL: a test of the field itself). */
export function cardinalityTest(
  column: CompiledColumn,
  condition: Exclude<Condition, { kind: 'and' | 'or' | 'isNull' }>,
  resolve: (literal: Literal) => Literal,
): (text: string) => boolean {
  if (condition.kind === 'array') {
    throw new EngineError(
      'executor_error',
      `${condition.operator} needs an array field; CARDINALITY(${column.name}) is a number.`,
    );
  }
  const test = numberTest(`CARDINALITY(${column.name})`, condition, resolve);
  const type = elementColumn(column).type as ElementType;
  return (text) => {
    const elements = arrayElements(text, type);
    return elements !== null && test({ units: BigInt(elements.length), scale: 0 });
  };
}
