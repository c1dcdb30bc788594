/**
 * MIN, MAX, COUNT(DISTINCT), HAVING and ORDER BY an aggregate's call on the small shop, and on
 * DECIMALs whose values differ only past a double's digits (every digit counts there).
 */
import { describe, expect, it } from 'vitest';
import { QueryEngine } from '../src/query-engine.ts';
import { compileSchema } from '../src/schema/compile-schema.ts';
import { parseSchemaConfig } from '../src/schema/schema-config.ts';
import { buildGeneration, column, runQuery, shop, TEST_META, table } from './fixtures.ts';

const { schema, generation } = shop();
const data = (text: string) => runQuery(schema, generation, text).data;
const meta = (text: string) => runQuery(schema, generation, text).meta;

/** The error a query is refused with. */
function errorOf(text: string): { code: string; message: string } {
  try {
    new QueryEngine(schema).execute(generation, text, TEST_META);
  } catch (error) {
    return error as { code: string; message: string };
  }
  throw new Error(`not refused: ${text}`);
}

describe('MIN, MAX and COUNT(DISTINCT)', () => {
  it('of numbers, decimals, dates and text, per group and over everything', () => {
    expect(
      data(
        'orders { status MIN(total) MAX(total) MIN(placed) MAX(placed) COUNT(DISTINCT customer_id) } ORDER BY status',
      ),
    ).toEqual([
      {
        status: 'open',
        min_total: 7.25,
        max_total: 7.25,
        min_placed: '2024-02-03',
        max_placed: '2024-02-03',
        count_distinct_customer_id: 1,
      },
      {
        status: 'paid',
        min_total: 1,
        max_total: 100,
        min_placed: '2024-01-02',
        max_placed: '2024-05-06',
        count_distinct_customer_id: 2,
      },
      {
        status: 'void',
        min_total: null,
        max_total: null,
        min_placed: null,
        max_placed: null,
        count_distinct_customer_id: 1,
      },
    ]);
    // Text in code point order: 'Σωκράτης' after the Latin names; NULL names are left out.
    expect(data('customers { MIN(name) MAX(name) COUNT(DISTINCT country) COUNT(*) }')).toEqual([
      { min_name: 'Ada', max_name: 'Σωκράτης', count_distinct_country: 3, count: 4 },
    ]);
  });

  it('print DECIMALs with their scale, as the column does', () => {
    const text = new QueryEngine(schema)
      .execute(generation, 'orders { MAX(total) MIN(total) }', TEST_META)
      .toString();
    expect(text).toContain('"max_total":100.00');
    expect(text).toContain('"min_total":1.00');
  });

  it('inside a to-many relation', () => {
    expect(
      data('customers (id IN (1, 3)) { name orders { MAX(total) COUNT(DISTINCT status) } }'),
    ).toEqual([
      { name: 'Ada', orders: [{ max_total: 12.5, count_distinct_status: 2 }] },
      { name: 'Σωκράτης', orders: [{ max_total: null, count_distinct_status: 1 }] },
    ]);
  });

  it('over no rows: one row of NULLs and zero', () => {
    expect(data("orders (status = 'none') { MIN(total) MAX(placed) COUNT(DISTINCT id) }")).toEqual([
      { min_total: null, max_placed: null, count_distinct_id: 0 },
    ]);
  });

  it('are echoed in meta.query as written', () => {
    expect(meta('orders { COUNT(DISTINCT status) MAX(total) }').query.aggregates).toEqual([
      'COUNT(DISTINCT status)',
      'MAX(total)',
    ]);
  });

  it('count a field called distinct, and refuse DISTINCT outside COUNT', () => {
    const named = compileSchema(
      { tables: [table('t', [column('id', 'int', false), column('distinct', 'int')])] },
      parseSchemaConfig({}),
    );
    const rows = {
      t: [
        [1, 5],
        [2, 5],
        [3, null],
      ],
    };
    expect(runQuery(named, buildGeneration(named, rows, 2), 't { COUNT(distinct) }').data).toEqual([
      { count: 2 },
    ]);
    expect(
      runQuery(named, buildGeneration(named, rows, 2), 't { COUNT(DISTINCT distinct) }').data,
    ).toEqual([{ count_distinct_distinct: 1 }]);
    expect(errorOf('orders { SUM(DISTINCT total) }').message).toContain(
      'DISTINCT is allowed in COUNT(...) only',
    );
  });
});

describe('HAVING', () => {
  it('keeps the groups whose aggregates meet the condition, by key or by call', () => {
    const byKey = data(
      'orders { status COUNT(*) } HAVING count >= 1 AND count < 3 ORDER BY status',
    );
    expect(byKey).toEqual([
      { status: 'open', count: 1 },
      { status: 'void', count: 1 },
    ]);
    expect(data('orders { status COUNT(*) } HAVING COUNT(*) = 3')).toEqual([
      { status: 'paid', count: 3 },
    ]);
    expect(
      data("orders { status SUM(total) } HAVING sum_total > 100.005 OR status = 'void'"),
    ).toEqual([
      { status: 'paid', sum_total: 113.5 },
      { status: 'void', sum_total: null },
    ]);
  });

  it('tests MIN and MAX as their field, NULL only by IS NULL', () => {
    expect(
      data("orders { status MAX(placed) } HAVING MAX(placed) >= '2024-03-01' ORDER BY status"),
    ).toEqual([{ status: 'paid', max_placed: '2024-05-06' }]);
    expect(data('orders { status MIN(total) } HAVING min_total IS NULL')).toEqual([
      { status: 'void', min_total: null },
    ]);
    expect(data("customers { country MIN(name) } HAVING min_name LIKE 'B%'")).toEqual([
      { country: 'IS', min_name: 'Björk' },
    ]);
  });

  it('compares sums exactly, at any number of decimals', () => {
    expect(data('orders { status SUM(total) } HAVING sum_total = 113.50')).toHaveLength(1);
    expect(data('orders { status SUM(total) } HAVING sum_total = 113.5000000000000000001')).toEqual(
      [],
    );
    expect(data('orders { status SUM(total) } HAVING sum_total IN (7.250, 1e9)')).toEqual([
      { status: 'open', sum_total: 7.25 },
    ]);
  });

  it('counts groups after it in total_matched, and drops the one row over no rows', () => {
    expect(meta('orders { status COUNT(*) } HAVING count > 1').pagination.total_matched).toBe(1);
    expect(data("orders (status = 'none') { COUNT(*) } HAVING count > 0")).toEqual([]);
  });

  it('is echoed in meta.query', () => {
    expect(meta('orders { status COUNT(*) } HAVING COUNT(*) > 1').query.having).toBe(
      'COUNT(*) > 1',
    );
  });

  it('gives the same answers from a cached plan with other values', () => {
    const engine = new QueryEngine(schema);
    const answer = (text: string) =>
      JSON.parse(engine.execute(generation, text, TEST_META)).data as unknown[];
    expect(answer('orders { status COUNT(*) } HAVING count > 2')).toHaveLength(1);
    expect(answer('orders { status COUNT(*) } HAVING count > 0')).toHaveLength(3);
    expect(answer("orders { status MAX(placed) } HAVING max_placed > '2024-05-01'")).toHaveLength(
      1,
    );
    expect(answer("orders { status MAX(placed) } HAVING max_placed > '2020-01-01'")).toHaveLength(
      2,
    );
    const cached = JSON.parse(
      engine.execute(generation, 'orders { status COUNT(*) } HAVING count > 1', TEST_META),
    );
    expect(cached.meta.query.having).toBe('count > 1');
  });

  it('refuses what it cannot test, naming what it can', () => {
    expect(errorOf('orders { status COUNT(*) } HAVING total > 1').message).toBe(
      'HAVING "total" must name an aggregate or GROUP BY field of the selection ("status", "count"), or an aggregate\'s call.',
    );
    expect(errorOf('orders { status COUNT(*) } HAVING MAX(nope) > 1').message).toContain(
      'Unknown field "nope" on table "orders".',
    );
    expect(errorOf('orders { status } HAVING status = 1').message).toContain(
      'HAVING keeps the groups of a grouped query',
    );
    expect(errorOf("orders { status COUNT(*) } HAVING count = 'x'").message).toBe(
      '"count" is a number: compare it with a number, not a string.',
    );
    expect(errorOf("orders { status COUNT(*) } HAVING count LIKE 'x'").message).toContain(
      'LIKE needs a text field; "count" is a number.',
    );
    const inFilter = errorOf('orders (COUNT(*) > 1) { status COUNT(*) }');
    expect(inFilter.code).toBe('parse_error');
    expect(inFilter.message).toContain('cannot be used in a filter');
  });
});

describe('aggregates named by their call only', () => {
  it('are computed for HAVING and ORDER BY, and written in no row', () => {
    expect(
      data('orders { status COUNT(*) } HAVING MAX(total) > 50 OR COUNT(DISTINCT customer_id) = 1'),
    ).toEqual([
      { status: 'paid', count: 3 },
      { status: 'open', count: 1 },
      { status: 'void', count: 1 },
    ]);
    expect(data('orders { status COUNT(*) } HAVING MAX(total) > 50')).toEqual([
      { status: 'paid', count: 3 },
    ]);
    expect(
      data('orders { status COUNT(*) } ORDER BY MIN(placed) DESC, status').map(
        (row: { status: string }) => row.status,
      ),
    ).toEqual(['void', 'open', 'paid']);
  });
});

describe('ORDER BY an aggregate', () => {
  it('by its call as by its key', () => {
    const byCall = data('orders { status COUNT(*) MAX(total) } ORDER BY MAX(total) DESC');
    expect(byCall.map((row: { status: string }) => row.status)).toEqual(['void', 'paid', 'open']);
    expect(data('orders { status COUNT(*) MAX(total) } ORDER BY max_total DESC')).toEqual(byCall);
    expect(errorOf('orders { status } ORDER BY COUNT(*)').message).toContain(
      'ORDER BY COUNT(*) sorts the groups of a grouped query',
    );
  });
});

describe('DECIMALs past a double', () => {
  const wide = compileSchema(
    {
      tables: [
        table('t', [
          column('id', 'int', false),
          column('g', 'int'),
          column('d', 'decimal', true, 10),
        ]),
      ],
    },
    parseSchemaConfig({}),
  );
  // Equal as doubles, different in the last digits.
  const rows = {
    t: [
      [1, 1, '12345678901234567890.0000000001'],
      [2, 1, '12345678901234567890.0000000003'],
      [3, 1, '12345678901234567890.0000000002'],
      [4, 2, '12345678901234567890.0000000003'],
      [5, 2, '12345678901234567890.0000000003'],
    ],
  };
  const generationOf = buildGeneration(wide, rows, 2);
  const text = (query: string) =>
    new QueryEngine(wide).execute(generationOf, query, TEST_META).toString();

  it('MIN, MAX and COUNT(DISTINCT) tell every digit apart', () => {
    const answer = text('t { g MIN(d) MAX(d) COUNT(DISTINCT d) } ORDER BY g');
    expect(answer).toContain(
      '{"g":1,"min_d":12345678901234567890.0000000001,"max_d":12345678901234567890.0000000003,"count_distinct_d":3}',
    );
    expect(answer).toContain('"count_distinct_d":1}');
  });

  it('HAVING compares them exactly', () => {
    expect(text('t { g MAX(d) } HAVING max_d > 12345678901234567890.0000000002')).toContain(
      '"g":1',
    );
    expect(text('t { g MIN(d) } HAVING min_d > 12345678901234567890.0000000002')).toContain(
      '"data":[{"g":2,"min_d":12345678901234567890.0000000003}]',
    );
  });
});
