import { describe, expect, it } from 'vitest';
import { planTables } from '../src/exec/plan-tables.ts';
import { QueryEngine } from '../src/query-engine.ts';
import { nextGeneration } from '../src/storage/generation-builder.ts';
import { exportGeneration, importGeneration } from '../src/storage/shared-generation.ts';
import { shop } from './fixtures.ts';

/** What live queries rely on: which tables a plan reads, and when each table last changed. */
describe('the inputs of live queries', () => {
  const { schema, generation } = shop();
  const engine = new QueryEngine(schema);
  const tablesOf = (text: string) => [...planTables(engine.plan(text))].sort();

  it('names every table a plan reads: its own, relations, related filters and sorts through them', () => {
    expect(tablesOf('customers { id }')).toEqual(['customers']);
    expect(tablesOf('customers { id orders { id } }')).toEqual(['customers', 'orders']);
    expect(tablesOf("customers (orders.status = 'paid') { id }")).toEqual(['customers', 'orders']);
    expect(tablesOf('orders { id } ORDER BY customer.name')).toEqual(['customers', 'orders']);
    expect(tablesOf("orders (status = 'paid') { id total }")).toEqual(['orders']);
  });

  it('stamps each table with the generation its rows last changed in, across threads', () => {
    expect([...generation.tableStamps]).toEqual([
      ['customers', 1],
      ['orders', 1],
    ]);
    const second = nextGeneration(
      generation,
      new Map([['customers', [{ op: 'insert', row: [99, 'New', 'IS'] }]]]),
      2,
    );
    const third = nextGeneration(second, new Map([['orders', []]]), 3);
    expect(Object.fromEntries(third.tableStamps)).toEqual({ customers: 2, orders: 1 });
    const imported = importGeneration(schema, structuredClone(exportGeneration(third)));
    expect(Object.fromEntries(imported.tableStamps)).toEqual({ customers: 2, orders: 1 });
  });
});
