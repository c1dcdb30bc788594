/**
 * DECIMAL(p,s) stored as units of 10^-s (storage/decimal-units.ts): the text ↔ units rules, and
 * filters, sorts and sums over chunks of units, of kept source texts (units past 2^53) and of
 * both, against a BigInt reference written here.
 */
import fc from 'fast-check';
import { describe, expect, it } from 'vitest';
import { QueryEngine } from '../src/query-engine.ts';
import { compileSchema } from '../src/schema/compile-schema.ts';
import { parseSchemaConfig } from '../src/schema/schema-config.ts';
import { ColumnBuilder } from '../src/storage/column-builder.ts';
import { formatUnits, parseUnits, storedUnits } from '../src/storage/decimal-units.ts';
import { buildGeneration, column, TEST_META, table } from './fixtures.ts';

describe('decimal units', () => {
  it('parse canonical texts at a scale, and refuse what units cannot hold', () => {
    expect(parseUnits('12.50', 2)).toBe(1250);
    expect(parseUnits('12.5', 2)).toBe(1250);
    expect(parseUnits('-7', 2)).toBe(-700);
    expect(Object.is(parseUnits('-0.00', 2), 0)).toBe(true);
    expect(parseUnits('12.505', 2)).toBeNaN();
    expect(parseUnits('NaN', 2)).toBeNaN();
    expect(parseUnits('1e5', 2)).toBeNaN();
    expect(parseUnits('90071992547409.91', 2)).toBe(9007199254740991);
    expect(parseUnits('90071992547409.92', 2)).toBeNaN();
  });

  it('store units only for the canonical text, which they print again', () => {
    expect(storedUnits('12.50', 2)).toBe(1250);
    expect(storedUnits('0.05', 2)).toBe(5);
    expect(storedUnits('-0.05', 2)).toBe(-5);
    expect(storedUnits('7', 0)).toBe(7);
    for (const text of ['12.5', '012.50', '-0.00', '7.0', '7', '.50', '1.']) {
      expect(storedUnits(text, text === '7.0' ? 0 : 2), text).toBeNaN();
    }
    expect(formatUnits(1250, 2)).toBe('12.50');
    expect(formatUnits(-5, 2)).toBe('-0.05');
    expect(formatUnits(0, 3)).toBe('0.000');
    expect(formatUnits(42, 0)).toBe('42');
  });

  it('round-trip every safe number of units through text', () => {
    fc.assert(
      fc.property(fc.maxSafeInteger(), fc.integer({ min: 0, max: 22 }), (units, scale) => {
        const text = formatUnits(units, scale);
        expect(storedUnits(text, scale)).toBe(units);
      }),
    );
  });

  it('keep a DECIMAL chunk as units, with source texts only where units cannot say it', () => {
    const builder = new ColumnBuilder('decimal', 2);
    for (const value of ['12.50', null, '12.5', '123456789012345678.90', '-0.01'])
      builder.append(value);
    const chunk = builder.finish();
    expect(chunk.kind).toBe('decimal');
    if (chunk.kind !== 'decimal') return;
    expect([chunk.values[0], chunk.values[4]]).toEqual([1250, -1]);
    expect([...(chunk.exact ?? [])]).toEqual([
      [2, '12.5'],
      [3, '123456789012345678.90'],
    ]);
  });
});

// ---------------------------------------------------------------------------------------------
// Filters, sorts and sums against a BigInt reference.

interface Exact {
  readonly units: bigint;
  readonly scale: number;
}

function parse(text: string): Exact {
  const [whole = '', fraction = ''] = text.replace('-', '').split('.');
  const units = BigInt(whole + fraction);
  return { units: text.startsWith('-') ? -units : units, scale: fraction.length };
}

/** a − b as a sign, exactly. */
function compare(a: string, b: string): number {
  const x = parse(a);
  const y = parse(b);
  const scale = Math.max(x.scale, y.scale);
  const difference =
    x.units * 10n ** BigInt(scale - x.scale) - y.units * 10n ** BigInt(scale - y.scale);
  return difference < 0n ? -1 : difference > 0n ? 1 : 0;
}

const OPERATORS = ['=', '!=', '<', '<=', '>', '>='] as const;

function passes(value: string, operator: (typeof OPERATORS)[number], literal: string): boolean {
  const sign = compare(value, literal);
  switch (operator) {
    case '=':
      return sign === 0;
    case '!=':
      return sign !== 0;
    case '<':
      return sign < 0;
    case '<=':
      return sign <= 0;
    case '>':
      return sign > 0;
    case '>=':
      return sign >= 0;
  }
}

/** A decimal text at `scale` with up to `digits` digits, as a source prints it. */
function decimalArb(digits: number, scale: number): fc.Arbitrary<string> {
  const limit = 10n ** BigInt(digits) - 1n;
  return fc
    .oneof(
      fc.bigInt({ min: -limit, max: limit }),
      fc.bigInt({ min: -1000n, max: 1000n }),
      fc.constantFrom(0n, 2n ** 53n - 1n, 2n ** 53n, -(2n ** 53n) - 1n),
    )
    .filter((units) => units >= -limit && units <= limit)
    .map((units) => {
      const sign = units < 0n ? '-' : '';
      const text = (units < 0n ? -units : units).toString().padStart(scale + 1, '0');
      return scale === 0 ? sign + text : `${sign}${text.slice(0, -scale)}.${text.slice(-scale)}`;
    });
}

/** A literal near the values: fewer, as many or more decimals than the column. */
function literalArb(values: readonly (string | null)[], scale: number): fc.Arbitrary<string> {
  const present = values.filter((value): value is string => value !== null);
  const near =
    present.length === 0
      ? fc.constant('0')
      : fc
          .tuple(fc.constantFrom(...present), fc.constantFrom('', '0', '1', '5', '9'))
          .map(([value, extra]) =>
            extra === '' ? value : `${value}${scale === 0 ? '.' : ''}${'0'.repeat(2)}${extra}`,
          );
  return fc.oneof(near, decimalArb(6, scale + 2), fc.constantFrom('0', '-0.001', '12.5'));
}

const DIGITS = [12, 18, 20];

function load(scale: number, values: readonly (string | null)[], chunkRows: number) {
  const schema = compileSchema(
    { tables: [table('t', [column('id', 'int', false), column('v', 'decimal', true, scale)])] },
    parseSchemaConfig({}),
  );
  const generation = buildGeneration(
    schema,
    { t: values.map((value, i) => [i, value]) },
    chunkRows,
  );
  const engine = new QueryEngine(schema);
  const raw = (text: string) => engine.execute(generation, text, TEST_META);
  return Object.assign((text: string) => JSON.parse(raw(text)), { raw });
}

/** A table of values at one of `precisions` and a scale, with a literal near them. */
const caseArb = (precisions: readonly number[]) =>
  fc
    .record({
      digits: fc.constantFrom(...precisions),
      scale: fc.integer({ min: 0, max: 4 }),
      chunkRows: fc.constantFrom(4, 16, 1000),
    })
    .chain(({ digits, scale, chunkRows }) =>
      fc
        .array(fc.option(decimalArb(digits, scale), { freq: 6 }), { minLength: 1, maxLength: 40 })
        .chain((values) =>
          fc.record({
            digits: fc.constant(digits),
            scale: fc.constant(scale),
            chunkRows: fc.constant(chunkRows),
            values: fc.constant(values),
            literal: literalArb(values, scale),
            operator: fc.constantFrom(...OPERATORS),
          }),
        ),
    );

function ids(answer: { data: { id: number }[] }): number[] {
  return answer.data.map((row) => row.id);
}

describe('DECIMAL stored as units', () => {
  it('filters exactly on literals of any scale, within units, past 2^53 and mixed', () => {
    fc.assert(
      fc.property(caseArb(DIGITS), ({ digits, scale, chunkRows, values, literal, operator }) => {
        const run = load(scale, values, chunkRows);
        const expected = values.flatMap((value, id) =>
          value !== null && passes(value, operator, literal) ? [id] : [],
        );
        expect(ids(run(`t (v ${operator} ${literal}) { id } LIMIT 1000`))).toEqual(expected);
        const [low, high] = [literal, values.find((v) => v !== null) ?? '0'].sort(compare) as [
          string,
          string,
        ];
        const between = values.flatMap((value, id) =>
          value !== null && compare(value, low) >= 0 && compare(value, high) <= 0 ? [id] : [],
        );
        expect(ids(run(`t (v BETWEEN ${low} AND ${high}) { id } LIMIT 1000`))).toEqual(between);
        // IN compares values kept as text by their doubles, as before units: p ≤ 15 here.
        if (digits > 15) return;
        const equal = values.flatMap((value, id) =>
          value !== null && (compare(value, literal) === 0 || compare(value, high) === 0)
            ? [id]
            : [],
        );
        expect(ids(run(`t (v IN (${literal}, ${high})) { id } LIMIT 1000`))).toEqual(equal);
      }),
      { numRuns: 300 },
    );
  });

  it('stores a negative scale (PostgreSQL 15) as whole units', () => {
    const run = load(-2, ['1200', '-300', null], 1000);
    expect(run.raw('t { v } LIMIT 3')).toContain('"data":[{"v":1200},{"v":-300},{"v":null}]');
    expect(run.raw('t (v > 0) { SUM(v) }')).toContain('"sum_v":1200}');
  });

  it('binds literals with more digits than a double holds exactly', () => {
    const run = load(2, ['12.50', '12.51', null], 1000);
    const match = (filter: string) => ids(run(`t (${filter}) { id }`));
    expect(match('v = 12.500000000000000001')).toEqual([]);
    expect(match('v IN (12.500000000000000001)')).toEqual([]);
    expect(match('v > 12.500000000000000001')).toEqual([1]);
    expect(match('v >= 12.500000000000000001')).toEqual([1]);
    expect(match('v <= 12.509999999999999999')).toEqual([0]);
    expect(match('v != 12.500000000000000001')).toEqual([0, 1]);
    expect(match('v BETWEEN 12.499999999999999999 AND 12.5')).toEqual([0]);
    expect(match('v IN (12.5, 12.510)')).toEqual([0, 1]);
  });

  // Values kept as text (units past 2^53) sort by their doubles, as before units: p ≤ 15 here.
  it('sorts by value and prints every digit with the scale', () => {
    fc.assert(
      fc.property(caseArb([12, 15]), ({ scale, chunkRows, values }) => {
        const run = load(scale, values, chunkRows);
        const order = values
          .map((value, id) => ({ value, id }))
          .sort((a, b) =>
            a.value === null
              ? b.value === null
                ? a.id - b.id
                : -1
              : b.value === null
                ? 1
                : compare(b.value, a.value) || a.id - b.id,
          );
        const answer = run('t { id v } ORDER BY v DESC LIMIT 3');
        expect(ids(answer)).toEqual(order.slice(0, 3).map((row) => row.id));
        // Decimals are JSON numbers of every digit, with the scale: the answer's own text.
        const data = run.raw('t { v } LIMIT 1000').match(/"data":(\[.*?\])/)?.[1];
        expect(data).toBe(`[${values.map((v) => `{"v":${v ?? 'null'}}`).join(',')}]`);
      }),
      { numRuns: 200 },
    );
  });

  it('sums units exactly, in chunks that add as doubles and those that cannot', () => {
    const sumText = (values: readonly (string | null)[]) => {
      const total = values.reduce((sum, v) => sum + (v === null ? 0n : parse(v).units), 0n);
      return `${total / 100n}.${String(total % 100n).padStart(2, '0')}`;
    };
    const small = Array.from({ length: 100 }, (_, i) => `${i}.${String(i % 100).padStart(2, '0')}`);
    const big = '9999999999999999.99';
    // Units just below 2^53: each a double, their sum not.
    const widest = Array.from({ length: 5 }, () => '90071992547409.91');
    for (const values of [
      small,
      [...small, big, big, '-0.01', null, '123456789012345678.90'],
      [...small, ...widest],
    ]) {
      const positive = values.filter((v) => v !== null && !v.startsWith('-'));
      for (const chunkRows of [8, 1000]) {
        const { raw } = load(2, values, chunkRows);
        expect(raw('t { COUNT(*) SUM(v) }')).toContain(`"sum_v":${sumText(values)}}`);
        expect(raw('t (v >= 0) { COUNT(*) SUM(v) }')).toContain(`"sum_v":${sumText(positive)}}`);
      }
    }
  });
});
