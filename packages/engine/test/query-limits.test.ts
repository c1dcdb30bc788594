/**
 * Structural query limits (QUERY_LIMITS): one query just under each cap is accepted, one just
 * over is refused with `query_too_complex` and a message naming the limit, its value and a way
 * under it. Hostile shapes get that error quickly instead of hanging or overflowing the stack.
 */
import { describe, expect, it } from 'vitest';
import { EngineError } from '../src/errors.ts';
import { QUERY_LIMITS } from '../src/exec/query-limits.ts';
import { QueryEngine } from '../src/query-engine.ts';
import { compileSchema } from '../src/schema/compile-schema.ts';
import { parseSchemaConfig } from '../src/schema/schema-config.ts';
import { column, loadGeneration, runQuery, shopRows, shopSource, table } from './fixtures.ts';

/** The shop (customers 1-n orders) and a table of 40 int columns, for caps on many keys. */
const wideColumns = Array.from({ length: 40 }, (_, i) => column(`c${i}`, 'int'));
const schema = compileSchema(
  { tables: [...shopSource.tables, table('wide', [column('id', 'int', false), ...wideColumns])] },
  parseSchemaConfig({}),
);
const generation = loadGeneration(schema, {
  ...shopRows,
  wide: [
    [1, ...wideColumns.map((_, i) => i % 3)],
    [2, ...wideColumns.map((_, i) => i % 2)],
    [3, ...wideColumns.map(() => 0)],
  ],
});

function plan(text: string) {
  return new QueryEngine(schema).plan(text);
}

function run(text: string) {
  return runQuery(schema, generation, text);
}

/** The EngineError `text` is refused with. */
function refusal(text: string): EngineError {
  try {
    plan(text);
  } catch (error) {
    if (error instanceof EngineError) return error;
    throw error;
  }
  throw new Error(`expected a refusal for: ${text.slice(0, 80)}`);
}

function expectTooComplex(text: string, message: string | RegExp): void {
  const error = refusal(text);
  expect(error.code).toBe('query_too_complex');
  expect(error.status).toBe(400);
  if (typeof message === 'string') expect(error.message).toBe(message);
  else expect(error.message).toMatch(message);
}

const list = (count: number, item: (i: number) => string, separator: string) =>
  Array.from({ length: count }, (_, i) => item(i)).join(separator);

describe('QUERY_LIMITS', () => {
  it('are the documented values, frozen', () => {
    expect(QUERY_LIMITS).toEqual({
      tokens: 10_000,
      selectionDepth: 32,
      filterDepth: 64,
      orderByKeys: 32,
      filterTerms: 256,
      writtenOrderByKeys: 256,
      inListValues: 1000,
      pathRelations: 8,
      selectionItems: 2000,
    });
    expect(Object.isFrozen(QUERY_LIMITS)).toBe(true);
  });
});

describe('duplicate ORDER BY keys', () => {
  it('keep only the first occurrence of each key', () => {
    const sorted = plan('wide { id } ORDER BY c1, c1 DESC, c2 DESC, c1, c2').orderBy;
    expect(sorted.map((sort) => sort.descending)).toEqual([false, true]);
    expect(sorted.map((sort) => sort.source.kind === 'column' && sort.source.column.name)).toEqual([
      'c1',
      'c2',
    ]);
  });

  it('give the rows the single keys give', () => {
    const single = run('orders { id } ORDER BY status DESC, id');
    const repeated = run('orders { id } ORDER BY status DESC, status, id, status DESC, id DESC');
    expect(repeated.data).toEqual(single.data);
    expect(repeated.data.map((row: { id: number }) => row.id)).toEqual([13, 10, 12, 14, 11]);
  });

  it('are echoed once in meta.query.order_by, as they apply', () => {
    const result = run('orders { id } ORDER BY status DESC, status, id');
    expect(result.meta.query.order_by).toEqual([
      { field: 'status', direction: 'DESC' },
      { field: 'id', direction: 'ASC' },
    ]);
  });

  it('collapse in nested selections and on aggregates, and through relations', () => {
    const nested = plan('customers { orders { id } ORDER BY status, id, status DESC }');
    const relation = nested.outputs.find((output) => output.kind === 'relation');
    expect(relation?.kind === 'relation' && relation.sub.orderBy).toHaveLength(2);
    expect(plan('orders { status COUNT(*) } ORDER BY count DESC, status, count').orderBy).toEqual([
      { source: { kind: 'aggregate', key: 'count' }, descending: true },
      expect.objectContaining({ descending: false }),
    ]);
    expect(
      plan('orders { id } ORDER BY customer.name, customer.name DESC, id').orderBy,
    ).toHaveLength(2);
  });

  it('256 repeats of one key sort as that key; more than 256 written keys are refused', () => {
    const repeated = run(`orders { id } ORDER BY ${list(256, () => 'total', ', ')} LIMIT 3`);
    expect(repeated.data).toEqual(run('orders { id } ORDER BY total LIMIT 3').data);
    expectTooComplex(
      `orders { id } ORDER BY ${list(4_000, () => 'total', ', ')} LIMIT 3`,
      /ORDER BY has more than 256 keys/,
    );
  });
});

describe('ORDER BY keys', () => {
  const orderBy = (count: number) => `wide { id } ORDER BY ${list(count, (i) => `c${i}`, ', ')}`;

  it(`accepts ${QUERY_LIMITS.orderByKeys} distinct keys`, () => {
    expect(plan(orderBy(32)).orderBy).toHaveLength(32);
    // Repeats do not count against the limit.
    expect(plan(`${orderBy(32)}, c0, c31 DESC`).orderBy).toHaveLength(32);
  });

  it('refuses a 33rd distinct key', () => {
    expectTooComplex(
      orderBy(33),
      'ORDER BY has 33 distinct keys (limit: 32 per query or nested selection, a repeated key counted once). Sort by fewer fields.',
    );
  });

  it('counts per nested selection', () => {
    const nested = `customers { orders { id } ORDER BY ${list(33, (i) => `f${i}`, ', ')} }`;
    expectTooComplex(nested, /^ORDER BY has 33 distinct keys/);
  });
});

describe('filter conditions', () => {
  const ors = (count: number) => list(count, (i) => `id = ${i}`, ' OR ');

  it(`accepts ${QUERY_LIMITS.filterTerms} conditions`, () => {
    expect(plan(`customers (${ors(256)}) { id }`).filter).toMatchObject({ kind: 'or' });
    expect(run(`customers (${ors(256)}) { id }`).data).toHaveLength(4);
  });

  it('refuses a 257th condition', () => {
    expectTooComplex(
      `customers (${ors(257)}) { id }`,
      /Too many conditions: more than 256 conditions in the query's filters \(limit: 256\)\. Use IN/,
    );
  });

  it('counts every kind of condition, in all filters of the query together', () => {
    const kinds = "name LIKE 'a%' AND country IS NULL AND id BETWEEN 1 AND 2 AND id IN (1, 2)";
    const top = `customers (${ors(200)} OR (${kinds})) { id orders (${list(52, (i) => `id = ${i}`, ' OR ')}) { id } }`;
    expect(() => plan(top)).not.toThrow();
    expectTooComplex(top.replace('(id = 0 OR', '(id = 0 OR id = 0 OR'), /more than 256 conditions/);
  });
});

describe('IN lists', () => {
  const values = (count: number) => list(count, (i) => String(i), ', ');

  it(`accepts ${QUERY_LIMITS.inListValues} values`, () => {
    // 0 to 999: every customer (ids 1 to 4).
    expect(run(`customers (id IN (${values(1000)})) { id }`).data).toHaveLength(4);
  });

  it('refuses 1,001 values', () => {
    expectTooComplex(
      `customers (id IN (${values(1001)})) { id }`,
      'The IN list on "id" has 1001 values (limit: 1000 values per IN list). Query the values in batches of at most 1000.',
    );
  });
});

describe('relation paths', () => {
  /** `customer.orders.customer…` walking `relations` relations from orders, then a field. */
  const path = (relations: number) =>
    [...list(relations, (i) => (i % 2 === 0 ? 'customer' : 'orders'), '.').split('.'), 'id'].join(
      '.',
    );

  it(`accepts ${QUERY_LIMITS.pathRelations} relations in a filter`, () => {
    expect(run(`orders (${path(8)} = 10) { id }`).data).toEqual([{ id: 10 }, { id: 11 }]);
  });

  it('refuses 9 relations in a filter or an ORDER BY', () => {
    expectTooComplex(
      `orders (${path(9)} = 1) { id }`,
      'The path "customer.orders.customer.orders.customer.orders.customer.ord..." in a filter walks 9 relations (limit: 8 relations per path). Query from a table closer to the field.',
    );
    expectTooComplex(
      'orders { id } ORDER BY a.b.c.d.e.f.g.h.i.j',
      'The path "a.b.c.d.e.f.g.h.i.j" in an ORDER BY walks 9 relations (limit: 8 relations per path). Query from a table closer to the field.',
    );
  });
});

describe('selection items', () => {
  const ids = (count: number) => list(count, () => 'id', ' ');

  it(`accepts ${QUERY_LIMITS.selectionItems} items at all levels`, () => {
    expect(run(`customers { ${ids(2000)} }`).data).toHaveLength(4);
    expect(() => plan(`customers { ${ids(1000)} orders { ${ids(999)} } }`)).not.toThrow();
  });

  it('refuses a 2,001st item, counting nested selections', () => {
    const message =
      'The query selects more than 2000 items at all levels together (limit: 2000 fields, wildcards, relations and aggregates per query). Select all fields of a table with *, or split the query.';
    expectTooComplex(`customers { ${ids(2001)} }`, message);
    expectTooComplex(`customers { ${ids(1000)} orders { ${ids(1000)} } }`, message);
  });
});

describe('nesting', () => {
  /** Customer 3 has one order, so every level holds one row. */
  const selections = (depth: number) => {
    const names = list(depth - 1, (i) => (i % 2 === 0 ? 'orders' : 'customer'), ' { ');
    return `customers (id = 3) { ${names} { id${' }'.repeat(depth)}`;
  };
  const parentheses = (depth: number) =>
    `customers (${'('.repeat(depth - 1)}id = 1${')'.repeat(depth)} { id }`;

  it(`accepts ${QUERY_LIMITS.selectionDepth} nested selections`, () => {
    let level = run(selections(32)).data[0];
    for (let depth = 2; depth < 32; depth++) {
      const next = depth % 2 === 0 ? level.orders[0] : level.customer;
      expect(next).toBeDefined();
      level = next;
    }
    expect(level.orders).toEqual([{ id: 13 }]);
  });

  it('refuses a 33rd nested selection', () => {
    expectTooComplex(
      selections(33),
      /^Query too complex at line 1, column \d+: Selections nested too deeply: more than 32 levels \(limit: 32 nested selections\)\. Select fewer levels of relations, and query deeper ones separately\.\n/,
    );
  });

  it(`accepts ${QUERY_LIMITS.filterDepth} nested parentheses in a filter`, () => {
    expect(run(parentheses(64)).data).toEqual([{ id: 1 }]);
  });

  it('refuses a 65th nested parenthesis', () => {
    expectTooComplex(
      parentheses(65),
      /^Query too complex at line 1, column 75: Filter nested too deeply: more than 64 levels of parentheses \(limit: 64\)\. Leave out parentheses that only repeat a grouping: AND binds tighter than OR\.\n/,
    );
  });

  it(`refuses more than ${QUERY_LIMITS.tokens} tokens`, () => {
    expectTooComplex(
      `customers { ${list(10_000, () => 'id', ' ')} }`,
      /: Query too long: more than 10000 tokens \(limit: 10000 tokens per query\)\. Select fewer fields, or use IN \(\.\.\.\) instead of a chain of ORs\.\n/,
    );
  });

  it('keeps syntax errors as parse_error', () => {
    expect(refusal('customers { id').code).toBe('parse_error');
  });
});

describe('hostile queries', () => {
  it('100 KB of "(" is refused at the parenthesis limit', () => {
    expectTooComplex(`customers ${'('.repeat(100_000)}`, /Filter nested too deeply/);
  });

  it('100 KB of nested selections is refused at the selection limit', () => {
    expectTooComplex(`customers { ${'orders { '.repeat(11_000)}`, /Selections nested too deeply/);
  });

  it('5,000-deep nested selections are refused', () => {
    const deep = `customers { ${'orders { customer { '.repeat(2_500)}id${' } }'.repeat(2_500)} }`;
    expectTooComplex(deep, /Selections nested too deeply/);
  });

  it('a 20,000-term OR chain is refused at its 257th condition', () => {
    expectTooComplex(
      `customers (${list(20_000, (i) => `id = ${i}`, ' OR ')}) { id }`,
      /more than 256 conditions/,
    );
  });

  it('a 2,400-term OR chain, under the token limit, is refused at the condition limit', () => {
    expectTooComplex(
      `customers (${list(2_400, (i) => `id = ${i}`, ' OR ')}) { id }`,
      /more than 256 conditions/,
    );
  });

  it('4,000 distinct ORDER BY keys are refused before any is resolved', () => {
    expectTooComplex(
      `orders { id } ORDER BY ${list(4_000, (i) => `f${i}`, ', ')}`,
      /ORDER BY has more than 256 keys/,
    );
  });

  it('a 60 KB unknown name is shown cut to 60 characters', () => {
    const name = 'x'.repeat(60_000);
    const cut = `${'x'.repeat(60)}...`;
    expect(refusal(`customers { "${name}" }`).message).toBe(
      `Unknown field "${cut}" on table "customers".`,
    );
    expect(refusal(`"${name}" { id }`).message).toBe(`Unknown table "${cut}".`);
    expect(refusal(`orders (customer."${name}" = 1) { id }`).message).toBe(
      `Unknown field "${cut}" on table "customers".`,
    );
    expect(refusal(`orders { status COUNT(*) } ORDER BY "${name}"`).message).toBe(
      `ORDER BY "${cut}" must name a selected field or aggregate of a grouped query.`,
    );
    expect(refusal(`orders (status."${name}" = 1) { id }`).message).toBe(
      `"status" on table "orders" is a field, not a relation: it has no "${cut}".`,
    );
  });

  it('a 4,000-value IN list is refused', () => {
    expectTooComplex(
      `customers (id IN (${list(4_000, String, ', ')})) { id }`,
      /has 4000 values \(limit: 1000/,
    );
  });
});
