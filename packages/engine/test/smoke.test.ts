import { describe, expect, it } from 'vitest';
import { QueryEngine } from '../src/query-engine.ts';
import { shop } from './fixtures.ts';

const meta = { version: '0.1.0-abc', swapCount: 0, ageMs: 5 };

function run(text: string) {
  const { schema, generation } = shop();
  const engine = new QueryEngine(schema);
  return JSON.parse(engine.execute(generation, text, meta));
}

describe('smoke', () => {
  it('selects, filters, embeds', () => {
    const result = run("customers (name = 'Ada') { id name orders { id total } }");
    expect(result.data).toEqual([
      {
        id: 1,
        name: 'Ada',
        orders: [
          { id: 10, total: 12.5 },
          { id: 11, total: 7.25 },
        ],
      },
    ]);
    const raw = new QueryEngine(shop().schema).execute(
      shop().generation,
      'orders (id = 10) { total }',
      meta,
    );
    expect(raw).toContain('"total":12.50');
  });
  it('aggregates', () => {
    const result = run('orders { status COUNT(*) SUM(total) } ORDER BY status');
    expect(result.data).toEqual([
      { status: 'open', count: 1, sum_total: 7.25 },
      { status: 'paid', count: 3, sum_total: 113.5 },
      { status: 'void', count: 1, sum_total: null },
    ]);
  });
  it('pages with AFTER', () => {
    const first = run("orders { id } LIMIT 2 AFTER ''");
    expect(first.data).toEqual([{ id: 10 }, { id: 11 }]);
    const second = run(`orders { id } LIMIT 2 AFTER '${first.meta.pagination.next_cursor}'`);
    expect(second.data).toEqual([{ id: 12 }, { id: 13 }]);
  });
  it('relation filter, forward embed', () => {
    const result = run("orders (customer.country = 'UK') { id customer { name } }");
    expect(result.data).toEqual([
      { id: 10, customer: { name: 'Ada' } },
      { id: 11, customer: { name: 'Ada' } },
    ]);
  });
});
