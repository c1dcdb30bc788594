/**
 * SUM and AVG of DECIMAL, NUMERIC, INT and BIGINT against a BigInt reference written here:
 * random values of every precision and scale the sources allow, random groupings, every place
 * an aggregate is computed (top level, grouped, ORDER BY an aggregate, inside a relation).
 * Numbers are compared as the engine's JSON text, so every digit counts.
 */
import fc from 'fast-check';
import { describe, expect, it } from 'vitest';
import { QueryEngine } from '../src/query-engine.ts';
import { compileSchema } from '../src/schema/compile-schema.ts';
import type { CompiledSchema } from '../src/schema/compiled-schema.ts';
import { parseSchemaConfig } from '../src/schema/schema-config.ts';
import type { SourceSchema } from '../src/source-schema.ts';
import type { Generation } from '../src/storage/generation.ts';
import { buildGeneration, column, TEST_META, table } from './fixtures.ts';

/** The summed column: DECIMAL(p,s), unconstrained NUMERIC, or a 32/64-bit integer. */
type ColumnSpec =
  | { readonly kind: 'decimal'; readonly precision: number; readonly scale: number }
  | { readonly kind: 'numeric' }
  | { readonly kind: 'int' | 'bigint' | 'ubigint' };

interface Row {
  readonly group: number | null;
  readonly value: string | null;
}

// ---------------------------------------------------------------------------------------------
// The reference: exact decimals as (units, scale) bigints, nothing shared with the engine.

interface Exact {
  units: bigint;
  scale: number;
}

function parse(text: string): Exact {
  const [whole = '', fraction = ''] = text.replace('-', '').split('.');
  const units = BigInt(whole + fraction);
  return { units: text.startsWith('-') ? -units : units, scale: fraction.length };
}

function atScale(value: Exact, scale: number): bigint {
  return value.units * 10n ** BigInt(scale - value.scale);
}

function render(units: bigint, scale: number): string {
  const sign = units < 0n ? '-' : '';
  const digits = (units < 0n ? -units : units).toString().padStart(scale + 1, '0');
  if (scale === 0) return sign + digits;
  return `${sign}${digits.slice(0, -scale)}.${digits.slice(-scale)}`;
}

/** Exact sum of `texts` at the largest scale among them (at least `minScale`). */
function exactSum(texts: readonly string[], minScale: number): Exact {
  const values = texts.map(parse);
  const scale = Math.max(minScale, ...values.map((v) => v.scale));
  return { units: values.reduce((sum, v) => sum + atScale(v, scale), 0n), scale };
}

/** The answers the docs promise (docs/instance-api.md, Aggregates) for one group's values. */
function expectedAggregates(spec: ColumnSpec, texts: readonly string[]) {
  if (texts.length === 0) return { sum: null, avg: null, count: '0' };
  const count = BigInt(texts.length);
  const sum = exactSum(texts, spec.kind === 'decimal' ? spec.scale : 0);
  let avg: string;
  const integer = spec.kind === 'int' || spec.kind === 'bigint' || spec.kind === 'ubigint';
  if (integer && sum.units < 2n ** 53n && sum.units > -(2n ** 53n)) {
    avg = String(Number(sum.units) / texts.length);
  } else {
    // Four more decimals, rounded half away from zero.
    const scaled = sum.units * 10_000n;
    const magnitude = scaled < 0n ? -scaled : scaled;
    const rounded = (magnitude * 2n + count) / (count * 2n);
    avg = render(scaled < 0n ? -rounded : rounded, sum.scale + 4);
  }
  return { sum: render(sum.units, sum.scale), avg, count: String(texts.length) };
}

/** a/n < b/m, exactly; null (no value) sorts as the engine sorts NULL. */
function compareAverage(a: readonly string[], b: readonly string[]): number {
  const x = exactSum(a, 0);
  const y = exactSum(b, 0);
  const scale = Math.max(x.scale, y.scale);
  const left = atScale(x, scale) * BigInt(b.length);
  const right = atScale(y, scale) * BigInt(a.length);
  return left < right ? -1 : left > right ? 1 : 0;
}

function compareSum(a: readonly string[], b: readonly string[]): number {
  const x = exactSum(a, 0);
  const y = exactSum(b, 0);
  const scale = Math.max(x.scale, y.scale);
  const left = atScale(x, scale);
  const right = atScale(y, scale);
  return left < right ? -1 : left > right ? 1 : 0;
}

// ---------------------------------------------------------------------------------------------
// Random columns and values.

const GROUPS = [0, 1, 2, 3];

const specArb: fc.Arbitrary<ColumnSpec> = fc.oneof(
  // MySQL allows DECIMAL(65,30), SQL Server DECIMAL(38,s); PostgreSQL numeric(1000,…) too.
  fc.integer({ min: 1, max: 65 }).chain((precision) =>
    fc.record({
      kind: fc.constant('decimal' as const),
      precision: fc.constant(precision),
      scale: fc.integer({ min: 0, max: Math.min(precision, 30) }),
    }),
  ),
  fc.constant({ kind: 'numeric' as const }),
  fc.constantFrom(
    { kind: 'int' as const },
    { kind: 'bigint' as const },
    { kind: 'ubigint' as const },
  ),
);

/** A decimal text of `units × 10^-scale`, as a source prints it (no `-0`). */
function decimalArb(maxDigits: number, scale: number): fc.Arbitrary<string> {
  const limit = 10n ** BigInt(maxDigits) - 1n;
  return fc.bigInt({ min: -limit, max: limit }).map((units) => render(units, scale));
}

function valueArb(spec: ColumnSpec): fc.Arbitrary<string> {
  switch (spec.kind) {
    case 'decimal':
      return decimalArb(spec.precision, spec.scale);
    case 'numeric':
      // Each value keeps its own scale (`1.50` has two decimals), beyond 30 too.
      return fc
        .record({ digits: fc.integer({ min: 1, max: 50 }), scale: fc.integer({ min: 0, max: 40 }) })
        .chain(({ digits, scale }) => decimalArb(digits, scale));
    case 'int':
      return fc.integer({ min: -(2 ** 31), max: 2 ** 32 - 1 }).map(String);
    case 'bigint':
      return fc.bigInt({ min: -(2n ** 63n), max: 2n ** 63n - 1n }).map(String);
    case 'ubigint':
      return fc.bigInt({ min: 0n, max: 2n ** 64n - 1n }).map(String);
  }
}

function rowsArb(spec: ColumnSpec): fc.Arbitrary<Row[]> {
  const value = fc.oneof(
    { weight: 6, arbitrary: valueArb(spec) },
    { weight: 1, arbitrary: fc.constant(null) },
    { weight: 1, arbitrary: fc.constant(spec.kind === 'decimal' ? render(0n, spec.scale) : '0') },
  );
  const group = fc.oneof(fc.constantFrom(...GROUPS), fc.constant(null));
  return fc.array(fc.record({ group, value }), { maxLength: 40 });
}

const caseArb = specArb.chain((spec) =>
  fc.record({
    spec: fc.constant(spec),
    rows: rowsArb(spec),
    chunkRows: fc.integer({ min: 1, max: 16 }),
  }),
);

// ---------------------------------------------------------------------------------------------
// The engine side.

function sourceFor(spec: ColumnSpec): SourceSchema {
  const summed =
    spec.kind === 'decimal'
      ? column('v', 'decimal', true, spec.scale)
      : column('v', spec.kind === 'numeric' ? 'decimal' : spec.kind === 'int' ? 'int' : 'bigint');
  return {
    tables: [
      table('groups', [column('id', 'int', false)]),
      table('items', [column('id', 'int', false), column('group_id', 'int'), summed], {
        foreignKeys: [
          {
            name: 'fk_group',
            columns: ['group_id'],
            referencedTable: 'groups',
            referencedColumns: ['id'],
          },
        ],
      }),
    ],
  };
}

function load(spec: ColumnSpec, rows: readonly Row[], chunkRows: number) {
  const schema = compileSchema(sourceFor(spec), parseSchemaConfig({}));
  const generation = buildGeneration(
    schema,
    {
      groups: GROUPS.map((id) => [id]),
      items: rows.map((row, i) => [i, row.group, row.value]),
    },
    chunkRows,
  );
  return { schema, generation };
}

/** The response's data with every number as its JSON source text. */
function dataText(schema: CompiledSchema, generation: Generation, text: string): unknown {
  const body = new QueryEngine(schema).execute(generation, text, TEST_META);
  const parsed = JSON.parse(body, (_key, value, context?: { source?: string }) =>
    typeof value === 'number' ? context?.source : value,
  );
  if (parsed.error) throw new Error(`${text}: ${parsed.error.message}`);
  return parsed.data;
}

function valuesOf(rows: readonly Row[], group?: number | null): string[] {
  return rows
    .filter((row) => group === undefined || row.group === group)
    .map((row) => row.value)
    .filter((value): value is string => value !== null);
}

/** The groups of `rows` by group_id in first-seen order. */
function groupsOf(rows: readonly Row[]): (number | null)[] {
  return [...new Set(rows.map((row) => row.group))];
}

function groupRow(spec: ColumnSpec, rows: readonly Row[], group: number | null) {
  const { sum, avg } = expectedAggregates(spec, valuesOf(rows, group));
  return { group_id: group === null ? null : String(group), sum_v: sum, avg_v: avg };
}

/** Ascending with NULLs last (the engine's and PostgreSQL's order); descending reverses it. */
function byGroupId(a: number | null, b: number | null): number {
  if (a === b) return 0;
  if (a === null) return 1;
  if (b === null) return -1;
  return a - b;
}

/** NULL aggregates sort last ascending, first descending, like every NULL. */
function nullsLast(
  rows: readonly Row[],
  compare: (a: string[], b: string[]) => number,
): (a: number | null, b: number | null) => number {
  return (a, b) => {
    const x = valuesOf(rows, a);
    const y = valuesOf(rows, b);
    if (x.length === 0 || y.length === 0)
      return (x.length === 0 ? 1 : 0) - (y.length === 0 ? 1 : 0);
    return compare(x, y);
  };
}

describe('exact SUM and AVG against a BigInt reference', () => {
  it('agree digit for digit over random values, scales and groupings', () => {
    fc.assert(
      fc.property(caseArb, ({ spec, rows, chunkRows }) => {
        const { schema, generation } = load(spec, rows, chunkRows);
        const data = (text: string) => dataText(schema, generation, text);
        const all = expectedAggregates(spec, valuesOf(rows));
        expect(data('items { SUM(v) AVG(v) COUNT(v) }')).toEqual([
          { sum_v: all.sum, avg_v: all.avg, count: all.count },
        ]);

        const groups = groupsOf(rows);
        const byKey = [...groups].sort(byGroupId);
        expect(data('items { group_id SUM(v) AVG(v) } ORDER BY group_id')).toEqual(
          byKey.map((group) => groupRow(spec, rows, group)),
        );

        // Through the row-at-a-time path (index candidates) and ordered by the exact sum.
        const sums = [...groups].sort(
          (a, b) => -nullsLast(rows, compareSum)(a, b) || byGroupId(a, b),
        );
        expect(
          data('items (id >= 0) { group_id SUM(v) AVG(v) } ORDER BY sum_v DESC, group_id'),
        ).toEqual(sums.map((group) => groupRow(spec, rows, group)));

        const averages = [...groups].sort(
          (a, b) => nullsLast(rows, compareAverage)(a, b) || byGroupId(a, b),
        );
        expect(data('items { group_id SUM(v) AVG(v) } ORDER BY avg_v, group_id')).toEqual(
          averages.map((group) => groupRow(spec, rows, group)),
        );

        // Inside a relation: each group's items, aggregated.
        expect(data('groups { id items { SUM(v) AVG(v) } } ORDER BY id')).toEqual(
          GROUPS.map((group) => {
            const { sum, avg } = expectedAggregates(spec, valuesOf(rows, group));
            return { id: String(group), items: [{ sum_v: sum, avg_v: avg }] };
          }),
        );
      }),
      { numRuns: Number(process.env.FC_RUNS ?? 300) },
    );
  }, 60_000);
});

describe('exact SUM and AVG at the edges', () => {
  function aggregates(spec: ColumnSpec, values: readonly (string | null)[]): unknown {
    const rows = values.map((value) => ({ group: 0, value }));
    const { schema, generation } = load(spec, rows, 8);
    return dataText(schema, generation, 'items { SUM(v) AVG(v) }');
  }

  it('sums the issue’s 300 values near 1.3e12 with 6 decimals to the source’s digits', () => {
    const values = Array.from({ length: 299 }, (_, i) =>
      render(
        1_333_333_329_231_000_000n + BigInt(((i * 7919) % 1_000_000) + (i % 7) * 1_000_000),
        6,
      ),
    );
    values.push('1333333328401.787750');
    expect(aggregates({ kind: 'decimal', precision: 19, scale: 6 }, values)).toEqual([
      { sum_v: '399999998769497.587119', avg_v: '1333333329231.6586237300' },
    ]);
  });

  it('moves to exact arithmetic before a double would round, at 2^53 exactly', () => {
    expect(aggregates({ kind: 'bigint' }, ['9007199254740991', '1', '1'])).toEqual([
      { sum_v: '9007199254740993', avg_v: '3002399751580331.0000' },
    ]);
    expect(
      aggregates({ kind: 'decimal', precision: 18, scale: 2 }, [
        '90071992547409.91',
        '0.01',
        '0.01',
      ]),
    ).toEqual([{ sum_v: '90071992547409.93', avg_v: '30023997515803.310000' }]);
    // Values the double path takes (below 2^50 units each) whose running sum meets 2^53.
    const nearTwo50 = Array.from({ length: 8 }, () => '11258999068426.23');
    expect(
      aggregates({ kind: 'decimal', precision: 18, scale: 2 }, [...nearTwo50, '0.08', '0.01']),
    ).toEqual([{ sum_v: '90071992547409.93', avg_v: '9007199254740.993000' }]);
    // Back below 2^53 the integer average is the double quotient again.
    expect(aggregates({ kind: 'bigint' }, ['9007199254740991', '2', '-4'])).toEqual([
      { sum_v: '9007199254740989', avg_v: String(9007199254740989 / 3) },
    ]);
  });

  it('rounds averages half away from zero', () => {
    const zeros = Array.from({ length: 31 }, () => '0');
    expect(aggregates({ kind: 'decimal', precision: 5, scale: 0 }, [...zeros, '1'])).toEqual([
      { sum_v: '1', avg_v: '0.0313' },
    ]);
    expect(aggregates({ kind: 'decimal', precision: 5, scale: 0 }, [...zeros, '-1'])).toEqual([
      { sum_v: '-1', avg_v: '-0.0313' },
    ]);
    expect(
      aggregates({ kind: 'decimal', precision: 5, scale: 2 }, ['0.01', '0.02', '0.02']),
    ).toEqual([{ sum_v: '0.05', avg_v: '0.016667' }]);
  });

  it('keeps every digit of DECIMAL(65,30) and of unsigned BIGINT', () => {
    const widest = `${'9'.repeat(35)}.${'9'.repeat(30)}`;
    expect(
      aggregates({ kind: 'decimal', precision: 65, scale: 30 }, [
        widest,
        widest,
        `-${widest}`,
        null,
      ]),
    ).toEqual([{ sum_v: widest, avg_v: `${'3'.repeat(35)}.${'3'.repeat(30)}0000` }]);
    expect(
      aggregates({ kind: 'ubigint' }, ['18446744073709551615', '18446744073709551615']),
    ).toEqual([{ sum_v: '36893488147419103230', avg_v: '18446744073709551615.0000' }]);
  });

  it('prints SUM with the declared scale, and unconstrained NUMERIC with the widest value’s', () => {
    expect(aggregates({ kind: 'decimal', precision: 12, scale: 2 }, ['1.00', '2.00'])).toEqual([
      { sum_v: '3.00', avg_v: '1.500000' },
    ]);
    expect(aggregates({ kind: 'numeric' }, ['1', '2.50', '0.125'])).toEqual([
      { sum_v: '3.625', avg_v: '1.2083333' },
    ]);
    expect(aggregates({ kind: 'numeric' }, ['1', '2'])).toEqual([{ sum_v: '3', avg_v: '1.5000' }]);
  });

  it('answers null for a sum that is no number (PostgreSQL’s NaN numeric)', () => {
    expect(aggregates({ kind: 'numeric' }, ['1.5', 'NaN'])).toEqual([{ sum_v: null, avg_v: null }]);
  });
});
