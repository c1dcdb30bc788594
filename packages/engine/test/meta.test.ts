/** The success envelope's `meta`: the query echo, pagination, snapshot and version. */
import { describe, expect, it } from 'vitest';
import { QueryEngine } from '../src/query-engine.ts';
import { compileSchema } from '../src/schema/compile-schema.ts';
import { parseSchemaConfig } from '../src/schema/schema-config.ts';
import { loadGeneration, runQuery, shop, shopRows, shopSource } from './fixtures.ts';

const { schema, generation } = shop();

function meta(text: string, snapshot = { version: '1.2.3-abc', swapCount: 7, ageMs: 5.6 }) {
  return JSON.parse(new QueryEngine(schema).execute(generation, text, snapshot)).meta;
}

describe('meta.query', () => {
  it('echoes only what the query specified', () => {
    expect(meta('customers { id }').query).toEqual({ fields: ['id'] });
  });

  it('fields in query order, wildcards and relations included', () => {
    expect(meta('customers { name * id orders { id } ... }').query).toEqual({
      fields: ['name', '*', 'id', 'orders', '...'],
    });
  });

  it('aggregates apart from the fields', () => {
    expect(meta('orders { status SUM(total) COUNT(placed) AVG(total) }').query).toEqual({
      fields: ['status'],
      aggregates: ['SUM(total)', 'COUNT(placed)', 'AVG(total)'],
    });
    expect(meta('orders { COUNT(*) }').query).toEqual({ aggregates: ['COUNT(*)'] });
  });

  it('the filter as query text, literals as written', () => {
    const echo = (filter: string) => meta(`orders (${filter}) { id }`).query.filter;
    expect(echo("status = 'paid'")).toBe("status = 'paid'");
    expect(echo("status = 'it''s'")).toBe("status = 'it''s'");
    expect(echo('total >= 1.50')).toBe('total >= 1.50');
    expect(echo('total < -3e2')).toBe('total < -3e2');
    expect(echo('total != NULL')).toBe('total != NULL');
    expect(echo('total <> 1')).toBe('total != 1');
    expect(echo("status LIKE 'p%'")).toBe("status LIKE 'p%'");
    expect(echo("status ilike 'P\\_%'")).toBe("status ILIKE 'P\\_%'");
    expect(echo("status IN ('paid', 'open')")).toBe("status IN ('paid', 'open')");
    expect(echo('total is not null')).toBe('total IS NOT NULL');
    expect(echo('total IS NULL')).toBe('total IS NULL');
    expect(echo('id BETWEEN 10 AND 12')).toBe('id BETWEEN 10 AND 12');
    expect(echo("customer.country = 'UK'")).toBe("customer.country = 'UK'");
  });

  it('the filter keeps the grouping of AND and OR', () => {
    const echo = (filter: string) => meta(`orders (${filter}) { id }`).query.filter;
    expect(echo("status = 'paid' and (id > 10 or total is null)")).toBe(
      "status = 'paid' AND (id > 10 OR total IS NULL)",
    );
    expect(echo("(status = 'paid' OR id = 1) AND id < 5")).toBe(
      "(status = 'paid' OR id = 1) AND id < 5",
    );
    expect(echo('id = 1 OR id = 2 OR id = 3')).toBe('id = 1 OR id = 2 OR id = 3');
  });

  it('order_by with explicit directions', () => {
    expect(
      meta('orders { id } ORDER BY status, customer.name DESC, id asc').query.order_by,
    ).toEqual([
      { field: 'status', direction: 'ASC' },
      { field: 'customer.name', direction: 'DESC' },
      { field: 'id', direction: 'ASC' },
    ]);
  });

  it('limit only when LIMIT was explicit, offset only when OFFSET was', () => {
    expect(meta('orders { id }').query).not.toHaveProperty('limit');
    expect(meta('orders { id } LIMIT 1000').query.limit).toBe(1000);
    expect(meta('orders { id } LIMIT 0').query.limit).toBe(0);
    expect(meta('orders { id } OFFSET 0').query).toEqual({ fields: ['id'], offset: 0 });
    expect(meta('orders { id } LIMIT 2 OFFSET 1').query).toEqual({
      fields: ['id'],
      limit: 2,
      offset: 1,
    });
  });

  it('does not echo nested clauses, pragmas or AFTER', () => {
    expect(
      meta("@lenient customers { id orders (status = 'paid') { id } ORDER BY id LIMIT 1 } AFTER ''")
        .query,
    ).toEqual({ fields: ['id', 'orders'] });
  });
});

describe('meta.pagination', () => {
  it('counts the page, the matches and the effective limit', () => {
    expect(meta('orders { id }').pagination).toEqual({
      count: 5,
      total_matched: 5,
      has_more: false,
      limit: 1000,
    });
    expect(meta("orders (status = 'paid') { id } LIMIT 2").pagination).toEqual({
      count: 2,
      total_matched: 3,
      has_more: true,
      limit: 2,
    });
    expect(meta("orders (status = 'paid') { id } LIMIT 2 OFFSET 1").pagination).toEqual({
      count: 2,
      total_matched: 3,
      has_more: false,
      limit: 2,
    });
  });

  it('LIMIT 0 and an OFFSET past the end', () => {
    expect(meta('orders { id } LIMIT 0').pagination).toEqual({
      count: 0,
      total_matched: 5,
      has_more: true,
      limit: 0,
    });
    expect(meta('orders { id } OFFSET 9').pagination).toEqual({
      count: 0,
      total_matched: 5,
      has_more: false,
      limit: 1000,
    });
  });

  it('counts groups for aggregates', () => {
    expect(meta('orders { status COUNT(*) } LIMIT 2').pagination).toEqual({
      count: 2,
      total_matched: 3,
      has_more: true,
      limit: 2,
    });
    expect(meta("orders (status = 'none') { COUNT(*) }").pagination).toEqual({
      count: 1,
      total_matched: 1,
      has_more: false,
      limit: 1000,
    });
  });

  it('has next_cursor under AFTER until the end', () => {
    const first = meta("orders { id } LIMIT 3 AFTER ''").pagination;
    expect(first).toEqual({
      count: 3,
      total_matched: 5,
      has_more: true,
      limit: 3,
      next_cursor: expect.any(String),
    });
    const last = meta(`orders { id } LIMIT 3 AFTER '${first.next_cursor}'`).pagination;
    expect(last).toEqual({ count: 2, total_matched: 5, has_more: false, limit: 3 });
  });
});

describe('meta: table, timing, snapshot, version', () => {
  it('names the table by its API name', () => {
    const aliased = compileSchema(
      shopSource,
      parseSchemaConfig({ field_aliases: { customers: 'clients' } }),
    );
    // Generations are loaded by API table name.
    const loaded = loadGeneration(aliased, { clients: shopRows.customers ?? [] });
    expect(runQuery(aliased, loaded, 'clients { id }').meta.table).toBe('clients');
  });

  it('reports timing, the snapshot and the version', () => {
    const result = meta('orders { id }');
    expect(result.table).toBe('orders');
    expect(typeof result.timing_ms).toBe('number');
    expect(result.timing_ms).toBeGreaterThanOrEqual(0);
    expect(result.snapshot).toEqual({ swap_count: 7, age_ms: 6 });
    expect(result.version).toBe('1.2.3-abc');
    expect(Object.keys(result)).toEqual([
      'table',
      'query',
      'pagination',
      'timing_ms',
      'snapshot',
      'version',
    ]);
  });
});

describe('meta head: a plan kept for its text and one answering once write the same bytes', () => {
  const snapshot = { version: '1.2.3-abc', swapCount: 7, ageMs: 5.6 };
  const untimed = (body: string) => body.replace(/"timing_ms":[0-9.e-]+/, '"timing_ms":0');

  it.each([
    'orders (id = 1) { id }',
    "orders (status = 'pâid ✓' OR id = 2) { id status }",
    `orders (status = '${'long literal '.repeat(8)}' OR id BETWEEN 1 AND 3) { id } LIMIT 5`,
  ])('%s', (text) => {
    const engine = new QueryEngine(schema);
    // The first answer's plan is not kept; asked again, the text's plan is, with its head.
    const answers = [1, 2, 3].map(() => untimed(engine.execute(generation, text, snapshot)));
    expect(engine.planCache.texts).toBe(1);
    expect(answers[1]).toBe(answers[0]);
    expect(answers[2]).toBe(answers[0]);
    // And the same bytes as a fresh engine's, whose plan is made anew.
    expect(untimed(new QueryEngine(schema).execute(generation, text, snapshot))).toBe(answers[0]);
    expect(JSON.parse(answers[0] as string).meta.table).toBe('orders');
  });
});
