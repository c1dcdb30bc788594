/**
 * A lookup answered at once (`Executor.lookup`: a small page of a flat selection, no generator)
 * gives the answer the sliced path gives: the same rows, meta and budgets, and a page past
 * `DIRECT_VALUES` values or with a relation goes the sliced way with the same result.
 */
import { describe, expect, it } from 'vitest';
import { Executor } from '../src/exec/execute.ts';
import { JsonWriter } from '../src/exec/json-writer.ts';
import { QueryBudget, runToEnd } from '../src/exec/query-budget.ts';
import { QueryEngine } from '../src/query-engine.ts';
import { compileSchema } from '../src/schema/compile-schema.ts';
import { parseSchemaConfig } from '../src/schema/schema-config.ts';
import { column, loadGeneration, shopRows, shopSource, TEST_META, table } from './fixtures.ts';

const source = {
  tables: [
    table('items', [
      column('id', 'int', false),
      column('name', 'string'),
      column('price', 'decimal'),
    ]),
  ],
};
const ROWS = 2000;
const rows = Array.from({ length: ROWS }, (_, i) => [i + 1, `item ${i + 1}`, `${i}.25`]);

function setUp(config: unknown = {}) {
  const schema = compileSchema(source, parseSchemaConfig(config));
  return { schema, generation: loadGeneration(schema, { items: rows }) };
}

/** The answer's text both ways: `lookup` (null when it declines) and the sliced `run`. */
function bothWays(text: string, config: unknown = {}) {
  const { schema, generation } = setUp(config);
  const plan = new QueryEngine(schema).plan(text);
  const limits = { timeoutMs: 10_000, maxRows: 10_000, maxResponseBytes: 10_000_000 };
  const write = (way: 'lookup' | 'run') => {
    const out = new JsonWriter(limits.maxResponseBytes);
    const executor = new Executor(generation, new QueryBudget(limits), out);
    const result = way === 'lookup' ? executor.lookup(plan) : runToEnd(executor.run(plan));
    return result === null ? null : { result, json: out.finish(0, result.count).text() };
  };
  return { direct: write('lookup'), sliced: write('run') };
}

describe('lookup answered at once', () => {
  it('answers a PK lookup and an IN of keys as the sliced path does', () => {
    for (const text of [
      'items (id = 7) { id name price }',
      'items (id = 99999) { id }',
      'items (id IN (3, 1, 2, 3)) { name id } LIMIT 2 OFFSET 1',
    ]) {
      const { direct, sliced } = bothWays(text);
      expect(direct, text).not.toBeNull();
      expect(direct, text).toEqual(sliced);
    }
  });

  it('leaves a page past its values, a scan and a sort to the sliced path', () => {
    const many = Array.from({ length: 600 }, (_, i) => i + 1).join(', ');
    for (const text of [
      `items (id IN (${many})) { id name }`,
      "items (name = 'item 3') { id }",
      'items (id IN (1, 2)) { id } ORDER BY price DESC',
    ]) {
      const { direct, sliced } = bothWays(text);
      expect(direct, text).toBeNull();
      expect(sliced?.result.count, text).toBeGreaterThan(0);
    }
    const shop = compileSchema(shopSource, parseSchemaConfig({}));
    const generation = loadGeneration(shop, shopRows);
    const out = new JsonWriter(1_000_000);
    const limits = { timeoutMs: 10_000, maxRows: 100, maxResponseBytes: 1_000_000 };
    const executor = new Executor(generation, new QueryBudget(limits), out);
    const embed = new QueryEngine(shop).plan('customers (id = 1) { id orders { id } }');
    expect(executor.lookup(embed)).toBeNull();
  });

  it('keeps the rows and bytes budgets', () => {
    const { schema, generation } = setUp({ query: { max_rows: 2 } });
    const engine = new QueryEngine(schema);
    expect(() => engine.execute(generation, 'items (id IN (1, 2, 3)) { id }', TEST_META)).toThrow(
      /more than 2 rows/,
    );
    const small = setUp({ query: { max_response_bytes: 1024 } });
    const sixty = Array.from({ length: 60 }, (_, i) => i + 1).join(', ');
    expect(() =>
      new QueryEngine(small.schema).execute(
        small.generation,
        `items (id IN (${sixty})) { id name price }`,
        TEST_META,
      ),
    ).toThrow(/bytes/);
  });
});
