/**
 * The lookup path (`Executor.lookup`): a lookup of a few rows with columns only, answered by
 * plain calls instead of the executor's generators. Each answer it gives must be the general
 * path's (`Executor.run`), byte for byte and with the same result, over rows in many chunks; it
 * must leave every other plan to `run`, and refuse what `run` refuses.
 */

import { describe, expect, it } from 'vitest';
import { Executor } from '../src/exec/execute.ts';
import { JsonWriter } from '../src/exec/json-writer.ts';
import { QueryBudget, type QueryLimits, runToEnd } from '../src/exec/query-budget.ts';
import { QueryEngine } from '../src/query-engine.ts';
import { compileSchema } from '../src/schema/compile-schema.ts';
import { parseSchemaConfig } from '../src/schema/schema-config.ts';
import { buildGeneration, column, table } from './fixtures.ts';

const SOURCE = {
  tables: [
    table('customers', [
      column('id', 'int', false),
      column('name', 'string'),
      column('score', 'float'),
      column('joined', 'date'),
    ]),
    table(
      'orders',
      [
        column('id', 'bigint', false),
        column('customer_id', 'int'),
        column('total', 'decimal', true, 2),
      ],
      {
        foreignKeys: [
          {
            name: 'fk_customer',
            columns: ['customer_id'],
            referencedTable: 'customers',
            referencedColumns: ['id'],
          },
        ],
      },
    ),
  ],
};

const schema = compileSchema(SOURCE, parseSchemaConfig({}));
const customers = Array.from({ length: 100 }, (_, i) => [
  i + 1,
  i % 7 === 0 ? null : `name "${i}" é`,
  i % 5 === 0 ? null : i / 4,
  i % 3 === 0 ? null : `2024-01-${String((i % 28) + 1).padStart(2, '0')}`,
]);
const orders = Array.from({ length: 300 }, (_, i) => [
  String(1000 + i),
  (i % 100) + 1,
  `${i}.${String(i % 100).padStart(2, '0')}`,
]);
// Chunks of 8 rows: a page's rows lie in different chunks.
const generation = buildGeneration(schema, { customers, orders }, 8);
const engine = new QueryEngine(schema);

/** `text` through one path: its result and its bytes, or null where the path declines it. */
function answerBy(path: 'lookup' | 'run', text: string, limits: QueryLimits = engine.limits) {
  const plan = engine.plan(text);
  const out = new JsonWriter(limits.maxResponseBytes);
  const executor = new Executor(generation, new QueryBudget(limits), out);
  const result = path === 'lookup' ? executor.lookup(plan) : runToEnd(executor.run(plan));
  return result === null ? null : { result, json: out.finish().text() };
}

const ids = (from: number, count: number) =>
  Array.from({ length: count }, (_, i) => from + i * 3).join(', ');

describe('the lookup path', () => {
  it.each([
    ['one row by key', 'customers (id = 42) { id name score joined }'],
    ['a key with no row', 'customers (id = 4242) { id name }'],
    ['a row whose fields are null', 'customers (id = 1) { name score joined }'],
    ['many keys, in the order the index gives', `customers (id IN (${ids(1, 30)})) { id name }`],
    ['a page of them', `customers (id IN (${ids(2, 30)})) { id score } LIMIT 5 OFFSET 3`],
    ['a page past the rows', `customers (id IN (${ids(2, 10)})) { id } LIMIT 5 OFFSET 20`],
    ['the most keys it takes (64)', `customers (id IN (${ids(1, 33)}, ${ids(2, 31)})) { id }`],
    ['a bigint key and a decimal', 'orders (id = 1234) { id customer_id total }'],
    ['every column', 'customers (id = 9) { * }'],
  ])('answers %s as the general path does', (_name, text) => {
    const looked = answerBy('lookup', text);
    expect(looked).not.toBeNull();
    expect(looked).toEqual(answerBy('run', text));
  });

  it.each([
    ['more keys than it takes', `customers (id IN (${ids(1, 33)}, ${ids(2, 32)})) { id }`],
    ['a filter no index answers whole', 'customers (score > 3) { id }'],
    ['a sorted lookup', `customers (id IN (${ids(1, 5)})) { id } ORDER BY name`],
    ['an aggregate', `customers (id IN (${ids(1, 5)})) { COUNT(*) }`],
    ['a row with its children', 'customers (id = 5) { id orders { id total } }'],
  ])('leaves %s to the general path', (_name, text) => {
    expect(answerBy('lookup', text)).toBeNull();
    expect(answerBy('run', text)).not.toBeNull();
  });

  it('refuses a page over the rows budget, as the general path does', () => {
    const limits = { ...engine.limits, maxRows: 4 };
    const text = `customers (id IN (${ids(1, 10)})) { id }`;
    expect(() => answerBy('lookup', text, limits)).toThrow(/rows/);
    expect(() => answerBy('run', text, limits)).toThrow(/rows/);
  });

  it('is the path a server takes: the answer is the same through `answer` and `execute`', () => {
    const text = `customers (id IN (${ids(3, 8)})) { id name joined } LIMIT 4`;
    const meta = { version: 'test', swapCount: 0, ageMs: 0 };
    const answered = engine.answer(generation, engine.plan(text), meta);
    expect(answered).not.toBeInstanceOf(Promise);
    const body = JSON.parse((answered as { text(): string }).text());
    const executed = JSON.parse(engine.execute(generation, text, meta));
    expect(body.data).toEqual(executed.data);
    expect(body.data.map((row: { id: number }) => row.id)).toEqual([3, 6, 9, 12]);
    expect(body.meta.pagination).toEqual(executed.meta.pagination);
  });
});
