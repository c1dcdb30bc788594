/**
 * Plans cached by shape: a query that differs from an earlier one only in its literal values
 * reuses that plan with its own values bound, and answers (or fails) exactly as a fresh engine
 * that never saw the earlier query.
 */
import { readdirSync, readFileSync } from 'node:fs';
import { join } from 'node:path';
import { queryShape } from '@replix/query';
import { describe, expect, it } from 'vitest';
import { EngineError } from '../src/errors.ts';
import { QueryEngine } from '../src/query-engine.ts';
import { compileSchema } from '../src/schema/compile-schema.ts';
import { parseSchemaConfig } from '../src/schema/schema-config.ts';
import type { SourceSchema } from '../src/source-schema.ts';
import { column, loadGeneration, shopSource, TEST_META, table } from './fixtures.ts';

const source: SourceSchema = {
  tables: [
    table('customers', [
      column('id', 'int', false),
      column('name', 'string'),
      column('country', 'string'),
      column('vip', 'boolean'),
      column('born', 'date'),
      column('seen', 'timestamp'),
      column('avatar', 'binary'),
      column('prefs', 'json'),
      column('balance', 'decimal', true, 2),
      column('big', 'bigint'),
      column('rating', 'float'),
      column('wake', 'time'),
    ]),
    // The shop's orders, as every engine test has them.
    shopSource.tables.find((t) => t.name === 'orders')!,
    table('lines', [column('order_id', 'bigint', false), column('no', 'int', false)], {
      primaryKey: ['order_id', 'no'],
      foreignKeys: [
        {
          name: 'fk_o',
          columns: ['order_id'],
          referencedTable: 'orders',
          referencedColumns: ['id'],
        },
      ],
    }),
  ],
};
const schema = compileSchema(source, parseSchemaConfig({}));
const hex = (text: string) => Uint8Array.from(Buffer.from(text, 'hex'));
const generation = loadGeneration(schema, {
  customers: [
    [
      1,
      'Ada',
      'UK',
      true,
      '1990-01-02',
      1_700_000_000_000_000,
      hex('0aff'),
      '{"a":1}',
      '12.50',
      '9007199254740993',
      4.5,
      3600,
    ],
    [
      2,
      'Björk',
      'IS',
      false,
      '1985-06-07',
      1_600_000_000_000_000,
      hex('00'),
      '[]',
      '100.00',
      '-5',
      2,
      0.5,
    ],
    [3, "O'Neil", 'IS', null, null, null, null, null, null, null, null, null],
    [
      4,
      null,
      'GR',
      true,
      '2000-02-29',
      1_650_000_000_123_000,
      hex('ff'),
      '{}',
      '-1.25',
      '1',
      -1,
      86399,
    ],
  ],
  orders: [
    ['10', 1, '12.50', 'paid', '2024-01-02'],
    ['11', 1, '7.25', 'open', '2024-02-03'],
    ['12', 2, '100.00', 'paid', '2024-03-04'],
    ['13', 3, null, 'void', null],
    ['14', null, '1.00', 'paid', '2024-05-06'],
  ],
  lines: [
    ['10', 1],
    ['10', 2],
    ['12', 1],
  ],
});

/** What an engine made of a query: its answer without `timing_ms`, or its error. */
function outcome(engine: QueryEngine, text: string): unknown {
  try {
    const body = JSON.parse(engine.execute(generation, text, TEST_META));
    body.meta.timing_ms = 'any';
    return body;
  } catch (error) {
    if (!(error instanceof EngineError)) throw error;
    return { error: error.code, status: error.status, message: error.message };
  }
}

/** A fresh engine's outcome: no plan cached, so parsed and validated. */
function cold(text: string): unknown {
  return outcome(new QueryEngine(schema), text);
}

/** Values a lifted literal is replaced by: good, bad and odd ones for every column type. */
const STRINGS = [
  'IS',
  'paid',
  "O'Neil",
  '',
  '2024-02-03',
  '1990-01-02',
  '2024-13-40',
  '2023-11-14T22:13:20Z',
  '2023-11-14 22:13:20',
  '0aff',
  'FF',
  'zz',
  '{"a":1}',
  '12.50',
  'Ada',
];
const NUMBERS = [
  '1',
  '2',
  '10',
  '-1',
  '0',
  '12.5',
  '12.50',
  '1e2',
  '9007199254740993',
  '-0.5',
  '3600',
];

/** `text` with its lifted literals replaced, one variant per round. */
function variants(text: string, rounds: number): string[] {
  const shape = queryShape(text);
  if (!shape || shape.literals.length === 0) return [];
  const out: string[] = [];
  for (let round = 0; round < rounds; round++) {
    let result = '';
    let from = 0;
    shape.literals.forEach((literal, index) => {
      result += text.slice(from, literal.span.start);
      const pick = (round * 7 + index * 3) % 97;
      // Mostly the same kind (a shape hit); now and then the other (a different shape).
      const sameKind = round % 5 !== 4;
      const asString = (literal.kind === 'string') === sameKind;
      result += asString
        ? `'${(STRINGS[pick % STRINGS.length] as string).replaceAll("'", "''")}'`
        : (NUMBERS[pick % NUMBERS.length] as string);
      from = literal.span.end;
    });
    out.push(result + text.slice(from));
  }
  return out;
}

const CORPUS = [
  'customers (id = 1) { id name }',
  'customers (id = 1) { id name } -- a comment',
  'customers (id IN (1, 2, 3)) { id }',
  'customers (id IN (1, 2, 2, NULL)) { id }',
  'customers (id BETWEEN 1 AND 3) { id name } ORDER BY id DESC',
  "customers (name = 'Ada' OR country = 'IS') { id name country }",
  "customers (country = 'IS' AND (id > 1 OR name LIKE 'A%')) { id }",
  "customers (name ILIKE 'o''n%' AND id != 2) { id name }",
  'customers (vip = true AND id >= 1) { id vip }',
  'customers (vip = NULL) { id }',
  "customers (born >= '1990-01-01') { id born }",
  "customers (born BETWEEN '1980-01-01' AND '1995-12-31') { id born }",
  "customers (seen > '2023-01-01T00:00:00Z') { id seen }",
  "customers (avatar = '0aff') { id avatar }",
  "customers (avatar IN ('00', 'ff')) { id }",
  "customers (prefs = '{}') { id prefs }",
  'customers (balance > 10.5) { id balance }',
  'customers (balance IN (12.5, 100, -1.25)) { id }',
  'customers (big = 9007199254740993) { id big }',
  'customers (rating < 3.5) { id rating }',
  'customers (wake <= 3600) { id wake }',
  "customers (id = 1) { id orders (status = 'paid') { id total } }",
  "customers (id <= 2) { id orders (total > 10 AND placed < '2024-03-01') { id } ORDER BY id LIMIT 1 }",
  "customers { id orders (status IN ('paid', 'open')) { id lines (no = 1) { no } } } LIMIT 3",
  "orders (customer.country = 'IS') { id customer { name } }",
  "orders (customer.name LIKE 'A%' AND total >= 1) { id }",
  'orders (lines.no = 2) { id }',
  "orders (status = 'paid') { status COUNT(*) SUM(total) } ORDER BY count DESC",
  'orders (total > 5) { status AVG(total) }',
  "orders (placed > '2024-01-01') { id } LIMIT 2 OFFSET 1",
  "orders (id > 10) { id } LIMIT 2 AFTER ''",
  "@lenient customers (id < 4) { id nope orders (status != 'void') { id } }",
  "customers (nope = 1 AND id = 'x') { id }",
  "customers (id = 'x') { id }",
  "customers (born = 'yesterday') { id }",
  'customers (vip > true) { id }',
  'customers (name LIKE 5) { id }',
  'customers (id = 1 { id }',
  "customers (id = 1) { id } AFTER 'x'",
  "lines (order_id = 10) { no } AFTER ''",
  "customers (born = 'bad' AND seen = 'worse') { id orders (placed = 'bad too') { id } }",
  'customers (id = 1) { name COUNT(*) orders (id = 1) { id } }',
];

/** Query texts for the three tables above, as other test files of this package write them. */
function harvested(): string[] {
  const folder = import.meta.dirname;
  const texts = new Set<string>();
  for (const file of readdirSync(folder)) {
    if (!file.endsWith('.test.ts')) continue;
    const code = readFileSync(join(folder, file), 'utf8');
    for (const match of code.matchAll(
      /(['`])((?:@lenient )?(?:customers|orders|lines) *[({][^'`$]*)\1/g,
    )) {
      texts.add(match[2] as string);
    }
  }
  return [...texts];
}

describe('plans cached by shape', () => {
  it('reuses the plan of a query that differs only in its values', () => {
    const engine = new QueryEngine(schema);
    const first = engine.plan('customers (id = 1) { id name }');
    const second = engine.plan('customers (id = 2) { id name }');
    expect(second.outputs).toBe(first.outputs);
    expect(second.filter).not.toBe(first.filter);
    expect(second.filter).toMatchObject({ kind: 'compare', operator: '=', value: 2 });
    expect(second.echo).toEqual({ fields: ['id', 'name'], filter: 'id = 2' });
    expect(first.echo).toEqual({ fields: ['id', 'name'], filter: 'id = 1' });
  });

  it('echoes the bound values in meta.query, whatever they hold', () => {
    const engine = new QueryEngine(schema);
    const texts = [
      "customers (name = 'x' AND country IN ('a', 'b') OR id BETWEEN 1 AND 9) { id }",
      "customers (name = 'it''s' AND country IN ('\u0000', '\"') OR id BETWEEN -1 AND 2e3) { id }",
      "customers (name = 'é😀\\' AND country IN ('', '--') OR id BETWEEN 0.5 AND 7) { id }",
      'customers ("na\u0000me" = \'a\') { id }',
      'customers ("na\u0000me" = \'b\') { id }',
      "customers (name LIKE 'a\u0000%' AND id = 1) { id }",
      "customers (name LIKE 'a\u0000%' AND id = 2) { id }",
    ];
    for (const text of texts) expect(outcome(engine, text)).toEqual(cold(text));
  });

  it('answers with the new values, in data and in meta.query', () => {
    const engine = new QueryEngine(schema);
    outcome(engine, "customers (country = 'UK' AND id IN (1, 2)) { id }");
    const answer = outcome(engine, "customers (country = 'IS' AND id IN (2, 3)) { id }") as {
      data: unknown;
      meta: { query: unknown };
    };
    expect(answer.data).toEqual([{ id: 2 }, { id: 3 }]);
    expect(answer.meta.query).toEqual({
      fields: ['id'],
      filter: "country = 'IS' AND id IN (2, 3)",
    });
  });

  it('keeps LIMIT, OFFSET, LIKE patterns, cursors and IN lengths in the shape', () => {
    const engine = new QueryEngine(schema);
    expect(engine.plan('orders { id } LIMIT 1').limit).toBe(1);
    expect(engine.plan('orders { id } LIMIT 2').limit).toBe(2);
    expect(engine.plan('orders { id } OFFSET 3').offset).toBe(3);
    expect(engine.plan("orders { id } LIMIT 2 AFTER '10'").after).toBe('10');
    expect(outcome(engine, "customers (name LIKE 'A%') { id }")).toMatchObject({
      data: [{ id: 1 }],
    });
    expect(outcome(engine, "customers (name LIKE 'B%') { id }")).toMatchObject({
      data: [{ id: 2 }],
    });
    expect(outcome(engine, 'customers (id IN (1, 2)) { id }')).toMatchObject({
      data: [{ id: 1 }, { id: 2 }],
    });
    expect(outcome(engine, 'customers (id IN (3, 4, 1)) { id }')).toMatchObject({
      data: [{ id: 1 }, { id: 3 }, { id: 4 }],
    });
  });

  it('fails a bad literal on a cached shape as a fresh engine does', () => {
    const engine = new QueryEngine(schema);
    const good =
      "customers (born = '1990-01-02' AND id = 1) { id orders (placed = '2024-01-02') { id } }";
    expect(outcome(engine, good)).toMatchObject({ data: [{ id: 1, orders: [{ id: 10 }] }] });
    // Validation converts a relation's filter before its parent's: the first error is the same.
    const bad = "customers (born = 'no' AND id = 1) { id orders (placed = 'nor this') { id } }";
    expect(outcome(engine, bad)).toEqual({
      error: 'executor_error',
      status: 400,
      message: "Field \"placed\" holds dates ('YYYY-MM-DD'); 'nor this' is not one.",
    });
    expect(outcome(engine, bad)).toEqual(cold(bad));
    const badTop =
      "customers (born = 'no' AND id = 1) { id orders (placed = '2024-01-02') { id } }";
    expect(outcome(engine, badTop)).toEqual({
      error: 'executor_error',
      status: 400,
      message: "Field \"born\" holds dates ('YYYY-MM-DD'); 'no' is not one.",
    });
    expect(outcome(engine, good)).toEqual(cold(good));
  });

  it('gives every error a fresh engine gives, with the same code and message', () => {
    const engine = new QueryEngine(schema);
    const pairs = [
      ['customers (id = 1) { id }', "customers (id = 'one') { id }"],
      ["customers (seen > '2023-01-01T00:00:00Z') { id }", "customers (seen > 'later') { id }"],
      ["customers (born = '1990-01-02') { id }", 'customers (born = 19900102) { id }'],
      ['customers (balance > 1.5) { id }', "customers (balance > '1.5') { id }"],
      ["customers (name = 'x') { id }", 'customers (name = 5) { id }'],
      ['customers (id IN (1, 2)) { id }', "customers (id IN (1, 'two')) { id }"],
      ['customers (id BETWEEN 1 AND 2) { id }', "customers (id BETWEEN 1 AND '2') { id }"],
      ['customers (vip = true) { id }', 'customers (vip = 1) { id }'],
      ['customers (id = 1) { id }', 'customers (id = 1) { id nope }'],
      ['customers (id = 1) { id }', 'customers (id = 1 { id }'],
      ['customers (id = 1) { id }', 'customerz (id = 1) { id }'],
    ];
    for (const [warm, text] of pairs) {
      outcome(engine, warm as string);
      const expected = cold(text as string);
      expect(expected, text).toHaveProperty('error');
      expect(outcome(engine, text as string)).toEqual(expected);
    }
  });

  it('answers every query of a corpus, with its values changed, as a fresh engine does', () => {
    const corpus = [...CORPUS, ...harvested()];
    expect(corpus.length).toBeGreaterThan(80);
    const engine = new QueryEngine(schema);
    for (const text of corpus) expect(outcome(engine, text), text).toEqual(cold(text));
    let checked = 0;
    for (const text of corpus) {
      for (const variant of variants(text, 6)) {
        expect(outcome(engine, variant), variant).toEqual(cold(variant));
        checked++;
      }
    }
    expect(checked).toBeGreaterThan(400);
  }, 60_000);
});

describe('meta.timing_ms', () => {
  it('counts planning: a number on a miss and on a hit', () => {
    const engine = new QueryEngine(schema);
    for (const text of ['customers (id = 1) { id }', 'customers (id = 2) { id }']) {
      const { timing_ms } = JSON.parse(engine.execute(generation, text, TEST_META)).meta;
      expect(timing_ms).toBeTypeOf('number');
      expect(timing_ms).toBeGreaterThanOrEqual(0);
    }
  });
});
