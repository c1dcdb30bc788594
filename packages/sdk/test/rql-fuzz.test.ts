import { type Condition, type Literal, parseQuery, type Query, type SubQuery } from '@replix/query';
import { describe, expect, it } from 'vitest';
import { type RqlQuery, rql } from '../src/index.ts';
import { random, randomString } from './random-text.ts';

function randomNumber(next: () => number): number | bigint {
  const kind = Math.floor(next() * 5);
  if (kind === 0) return Math.floor((next() - 0.5) * 2 ** 31);
  if (kind === 1) return (next() - 0.5) * 10 ** Math.floor(next() * 600 - 300);
  if (kind === 2) {
    const digits = Array.from({ length: 1 + Math.floor(next() * 40) }, () =>
      Math.floor(next() * 10),
    ).join('');
    return BigInt(next() < 0.5 ? `-${digits}` : digits);
  }
  if (kind === 3) return Number.MAX_SAFE_INTEGER + Math.floor(next() * 1000);
  return next() < 0.5 ? 5e-324 : -1.7976931348623157e308;
}

/** The tree without spans, source text or literal values: what makes two queries alike. */
function skeleton(value: unknown): unknown {
  if (Array.isArray(value)) return value.map(skeleton);
  if (value === null || typeof value !== 'object') return value;
  const result: Record<string, unknown> = {};
  for (const [name, field] of Object.entries(value)) {
    if (name === 'span' || name === 'source') continue;
    // Literal values, IN lists, LIKE patterns and the AFTER cursor are the values under test
    // (valuesOf compares them whole, the length of an IN list included).
    if (['value', 'values', 'text', 'pattern', 'after'].includes(name)) continue;
    result[name] = skeleton(field);
  }
  return result;
}

function literalValue(literal: Literal): unknown {
  switch (literal.kind) {
    case 'string':
      return literal.value;
    case 'number':
      return literal.text;
    case 'boolean':
      return literal.value;
    case 'null':
      return null;
  }
}

/** Every value the query holds, in text order: literals, LIKE patterns, the cursor. */
function valuesOf(query: Query): unknown[] {
  const values: unknown[] = [];
  const visit = (condition: Condition | null) => {
    if (!condition) return;
    switch (condition.kind) {
      case 'compare':
        values.push(literalValue(condition.value));
        break;
      case 'like':
        values.push(condition.pattern);
        break;
      case 'in':
        values.push(condition.values.map(literalValue));
        break;
      case 'between':
        values.push(literalValue(condition.low), literalValue(condition.high));
        break;
      case 'and':
      case 'or':
        for (const operand of condition.operands) visit(operand);
        break;
      case 'isNull':
        break;
    }
  };
  const walk = (sub: SubQuery) => {
    visit(sub.filter);
    for (const item of sub.selection) if (item.kind === 'relation') walk(item.query);
  };
  walk(query);
  if (query.after !== null) values.push(query.after);
  return values;
}

/** How a value reads back from the tree: numbers as their exact text. */
function expected(value: unknown): unknown {
  if (Array.isArray(value)) return value.map(expected);
  if (typeof value === 'number' || typeof value === 'bigint') return String(value);
  return value;
}

type Template = (values: readonly unknown[]) => RqlQuery;

/** Templates with every kind of place a value goes, tight spacing and comments included. */
const TEMPLATES: { name: string; build: Template; kinds: ('s' | 'n' | 'a')[] }[] = [
  {
    name: 'compare',
    build: ([a]) => rql`items (name = ${a}) { id name } LIMIT 5`,
    kinds: ['s'],
  },
  {
    name: 'tight',
    build: ([a, b]) => rql`items(name=${a}AND id>${b}){id}`,
    kinds: ['s', 'n'],
  },
  {
    name: 'in and or',
    build: ([a, b, c]) => rql`items (name IN ${a} OR price = ${b} OR code != ${c}) { id }`,
    kinds: ['a', 'n', 's'],
  },
  {
    name: 'like, between and after',
    build: ([a, b, c, d]) =>
      rql`items (name LIKE ${a} AND id BETWEEN ${b} AND ${c}) { id } AFTER ${d}`,
    kinds: ['s', 'n', 'n', 's'],
  },
  {
    name: 'comments',
    build: ([a, b]) => rql`-- items by name
items ( -- the name
  name = ${a} -- then the id
  OR id = ${b}) { id }`,
    kinds: ['s', 'n'],
  },
  {
    name: 'nested relation',
    build: ([a, b]) => rql`items { id orders (note ILIKE ${a} AND qty < ${b}) { id } }`,
    kinds: ['s', 'n'],
  },
];

function randomValue(kind: 's' | 'n' | 'a', next: () => number): unknown {
  if (kind === 's') return randomString(next);
  if (kind === 'n') return randomNumber(next);
  return Array.from({ length: 1 + Math.floor(next() * 4) }, () =>
    next() < 0.7 ? randomString(next) : randomNumber(next),
  );
}

function benign(kind: 's' | 'n' | 'a'): unknown {
  return kind === 's' ? 'x' : kind === 'n' ? 1 : ['x'];
}

describe('rql against the parser', () => {
  for (const template of TEMPLATES) {
    it(`keeps the shape and every value of "${template.name}" for 2,000 random inputs`, () => {
      const shape = skeleton(parseQuery(template.build(template.kinds.map(benign)).text));
      const next = random(0x5eed + template.name.length);
      for (let run = 0; run < 2000; run++) {
        const values = template.kinds.map((kind) => randomValue(kind, next));
        const text = template.build(values).text;
        const query = parseQuery(text);
        expect(skeleton(query), text).toEqual(shape);
        expect(valuesOf(query), text).toEqual(values.map(expected));
      }
    });
  }

  it('reads true, false and null back as their kinds', () => {
    const query = parseQuery(rql`t (a = ${true} OR b = ${false} OR c = ${null}) { a }`.text);
    expect(skeleton(query)).toEqual(skeleton(parseQuery('t (a = 1 OR b = 1 OR c = 1) { a }')));
    expect(valuesOf(query)).toEqual([true, false, null]);
  });
});
