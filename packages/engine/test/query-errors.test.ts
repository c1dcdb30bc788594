/**
 * Every error a query can get from validation (exec/validate.ts and the literal conversion it
 * calls) and from AFTER cursors, with its exact message, code and HTTP status.
 */
import { describe, expect, it } from 'vitest';
import { EngineError } from '../src/errors.ts';
import { QueryEngine } from '../src/query-engine.ts';
import { compileSchema } from '../src/schema/compile-schema.ts';
import { parseSchemaConfig } from '../src/schema/schema-config.ts';
import type { SourceSchema } from '../src/source-schema.ts';
import { column, loadGeneration, TEST_META, table } from './fixtures.ts';

const source: SourceSchema = {
  tables: [
    table('customers', [
      column('id', 'int', false),
      column('name', 'string'),
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
    table('events', [column('id', 'float', false), column('what', 'string')]),
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
    table('logs', [column('msg', 'string')], { primaryKey: [] }),
    table('order_notes', [column('id', 'int', false), column('order_id', 'bigint')], {
      foreignKeys: [
        {
          name: 'fk_n',
          columns: ['order_id'],
          referencedTable: 'orders',
          referencedColumns: ['id'],
        },
      ],
    }),
    table(
      'orders',
      [column('id', 'bigint', false), column('customer_id', 'int'), column('status', 'string')],
      {
        foreignKeys: [
          {
            name: 'fk_c',
            columns: ['customer_id'],
            referencedTable: 'customers',
            referencedColumns: ['id'],
          },
        ],
      },
    ),
    table('tags', [column('id', 'string', false)]),
  ],
};
const schema = compileSchema(source, parseSchemaConfig({}));
const generation = loadGeneration(schema, { customers: [[1, 'Ada']], tags: [['a'], ['b']] });

function failure(text: string): { code: string; status: number; message: string } {
  try {
    new QueryEngine(schema).execute(generation, text, TEST_META);
  } catch (error) {
    if (!(error instanceof EngineError)) throw error;
    return { code: error.code, status: error.status, message: error.message };
  }
  throw new Error(`expected "${text}" to fail`);
}

/** Expects an executor_error (400) with exactly `message`. */
function rejects(text: string, message: string) {
  expect(failure(text)).toEqual({ code: 'executor_error', status: 400, message });
}

describe('unknown_table', () => {
  it('is a 404 with a suggestion when one is close', () => {
    expect(failure('custmers { id }')).toEqual({
      code: 'unknown_table',
      status: 404,
      message: 'Unknown table "custmers". Did you mean "customers"?',
    });
    expect(failure('invoices { id }')).toEqual({
      code: 'unknown_table',
      status: 404,
      message: 'Unknown table "invoices".',
    });
  });

  it('is checked before anything else in the query', () => {
    expect(failure('nothing (x = 1) { y } ORDER BY z').code).toBe('unknown_table');
  });
});

describe('parse_error', () => {
  it('wraps syntax errors as a 400', () => {
    const error = failure('customers { id');
    expect(error.code).toBe('parse_error');
    expect(error.status).toBe(400);
  });
});

describe('unknown fields', () => {
  it('in the selection', () => {
    rejects(
      'customers { id nme }',
      'Unknown field "nme" on table "customers". Did you mean "name"?',
    );
    rejects('customers { id zzz }', 'Unknown field "zzz" on table "customers".');
    // Relations are candidates too.
    rejects(
      'customers { ordrs }',
      'Unknown field "ordrs" on table "customers". Did you mean "orders"?',
    );
  });

  it('as a nested relation', () => {
    rejects(
      'customers { ordrs { id } }',
      'Unknown relation "ordrs" on table "customers". Did you mean the relation "orders"?',
    );
    // A relation the name is a word of (reverse relations are named after their table).
    rejects(
      'orders { notes { id } }',
      'Unknown relation "notes" on table "orders". Did you mean the relation "order_notes"?',
    );
    // Without a close one, the table's relations, so reverse ones can be found.
    rejects(
      'orders { items { no } }',
      'Unknown relation "items" on table "orders". Its relations: "customer", "lines", "order_notes".',
    );
    rejects(
      'events { items { id } }',
      'Unknown relation "items" on table "events". It has no relations.',
    );
    rejects(
      'customers { orders { id stats } }',
      'Unknown field "stats" on table "orders". Did you mean "status"?',
    );
  });

  it('in an aggregate', () => {
    rejects(
      'customers { SUM(balanse) }',
      'Unknown field "balanse" on table "customers". Did you mean "balance"?',
    );
    rejects('customers { COUNT(nope) }', 'Unknown field "nope" on table "customers".');
  });

  it('in a filter, at any segment of a path', () => {
    rejects(
      'customers (nme = 1) { id }',
      'Unknown field "nme" on table "customers". Did you mean "name"?',
    );
    rejects(
      "orders (custmer.name = 'x') { id }",
      'Unknown field "custmer" on table "orders". Did you mean "customer"?',
    );
    rejects(
      "orders (customer.nam = 'x') { id }",
      'Unknown field "nam" on table "customers". Did you mean "name"?',
    );
    rejects(
      "customers { orders (sttus = 'x') { id } }",
      'Unknown field "sttus" on table "orders". Did you mean "status"?',
    );
  });

  it('in ORDER BY', () => {
    rejects(
      'customers { id } ORDER BY nme',
      'Unknown field "nme" on table "customers". Did you mean "name"?',
    );
    rejects(
      'orders { id } ORDER BY customer.nme',
      'Unknown field "nme" on table "customers". Did you mean "name"?',
    );
  });
});

describe('paths', () => {
  it('a field used as a relation', () => {
    rejects(
      "customers (name.first = 'x') { id }",
      '"name" on table "customers" is a field, not a relation: it has no "first".',
    );
    rejects(
      'orders { id } ORDER BY status.x',
      '"status" on table "orders" is a field, not a relation: it has no "x".',
    );
  });

  it('a relation used as a field', () => {
    rejects(
      'orders (customer = 1) { id }',
      '"customer" on table "orders" is a relation; name one of its fields, e.g. "customer.id".',
    );
    rejects(
      'lines { no } ORDER BY order.customer',
      '"customer" on table "orders" is a relation; name one of its fields, e.g. "order.customer.id".',
    );
  });

  it('a field given a nested selection', () => {
    rejects(
      'customers { name { first } }',
      '"name" on table "customers" is a field, not a relation: it takes no nested selection.',
    );
  });
});

describe('types', () => {
  it('booleans compare with = and != only', () => {
    for (const op of ['<', '<=', '>', '>=']) {
      rejects(
        `customers (vip ${op} true) { id }`,
        'Field "vip" is boolean: compare it with = or != only.',
      );
    }
    expect(() => new QueryEngine(schema).plan('customers (vip = true) { id }')).not.toThrow();
    expect(() => new QueryEngine(schema).plan('customers (vip < NULL) { id }')).not.toThrow();
  });

  it('LIKE and ILIKE need text', () => {
    rejects("customers (id LIKE '1%') { id }", 'LIKE needs a text field; "id" is int.');
    rejects("customers (born ILIKE '2024%') { id }", 'ILIKE needs a text field; "born" is date.');
    rejects("customers (avatar LIKE 'ff%') { id }", 'LIKE needs a text field; "avatar" is binary.');
    expect(() => new QueryEngine(schema).plan("customers (prefs LIKE '{%') { id }")).not.toThrow();
  });

  it('literals must fit the column', () => {
    rejects("customers (id = '1') { id }", `Field "id" holds numbers; '1' is not one.`);
    rejects('customers (balance > true) { id }', 'Field "balance" holds numbers; true is not one.');
    rejects("customers (big IN (1, 'x')) { id }", `Field "big" holds numbers; 'x' is not one.`);
    rejects(
      "customers (rating BETWEEN 1 AND 'z') { id }",
      `Field "rating" holds numbers; 'z' is not one.`,
    );
    rejects("customers (wake = '08:00') { id }", `Field "wake" holds numbers; '08:00' is not one.`);
    rejects(
      'customers (vip = 1) { id }',
      'Field "vip" holds booleans (true or false); 1 is not one.',
    );
    rejects(
      "customers (vip != 'yes') { id }",
      `Field "vip" holds booleans (true or false); 'yes' is not one.`,
    );
    rejects(
      "customers (born = '2023-02-29') { id }",
      `Field "born" holds dates ('YYYY-MM-DD'); '2023-02-29' is not one.`,
    );
    rejects(
      'customers (born > 20240101) { id }',
      `Field "born" holds dates ('YYYY-MM-DD'); 20240101 is not one.`,
    );
    rejects(
      "customers (seen > 'yesterday') { id }",
      `Field "seen" holds timestamps (ISO 8601, e.g. '2024-05-01T12:00:00Z'); 'yesterday' is not one.`,
    );
    rejects(
      'customers (avatar = 255) { id }',
      `Field "avatar" holds binary values (lowercase hex, e.g. '0aff'); 255 is not one.`,
    );
    rejects(
      'customers (name = 42) { id }',
      `Field "name" holds text (quote the value: '…'); 42 is not one.`,
    );
    rejects(
      'customers (prefs = false) { id }',
      `Field "prefs" holds text (quote the value: '…'); false is not one.`,
    );
  });

  it('NULL fits every column', () => {
    const engine = new QueryEngine(schema);
    for (const field of [
      'id',
      'name',
      'vip',
      'born',
      'seen',
      'avatar',
      'prefs',
      'balance',
      'big',
      'rating',
      'wake',
    ]) {
      expect(() =>
        engine.plan(`customers (${field} = NULL OR ${field} IN (NULL)) { id }`),
      ).not.toThrow();
    }
  });

  it('SUM and AVG need numbers', () => {
    rejects(
      'customers { SUM(name) }',
      'SUM needs a numeric field; "name" is string. MIN and MAX take fields of any type.',
    );
    rejects(
      'customers { AVG(born) }',
      'AVG needs a numeric field; "born" is date. MIN and MAX take fields of any type.',
    );
    rejects(
      'customers { AVG(seen) }',
      'AVG needs a numeric field; "seen" is timestamp. MIN and MAX take fields of any type.',
    );
    rejects(
      'customers { SUM(vip) }',
      'SUM needs a numeric field; "vip" is boolean. MIN and MAX take fields of any type.',
    );
    expect(() =>
      new QueryEngine(schema).plan('customers { COUNT(name) SUM(wake) AVG(big) }'),
    ).not.toThrow();
  });
});

describe('aggregates', () => {
  it('no relation beside aggregates', () => {
    rejects(
      'customers { COUNT(*) orders { id } }',
      'Relation "orders" cannot be selected beside aggregates: every other field is a GROUP BY key.',
    );
    rejects(
      'orders { customer COUNT(*) }',
      'Relation "customer" cannot be selected beside aggregates: every other field is a GROUP BY key.',
    );
  });

  it('no two result fields with one name', () => {
    rejects(
      'customers { COUNT(*) COUNT(name) }',
      'Two fields of the result would be named "count".',
    );
    rejects(
      'customers { SUM(balance) SUM(balance) }',
      'Two fields of the result would be named "sum_balance".',
    );
  });

  it('ORDER BY names a selected field or aggregate', () => {
    rejects(
      'customers { name COUNT(*) } ORDER BY id',
      'ORDER BY "id" must name a selected field or aggregate of a grouped query.',
    );
    rejects(
      'customers { name COUNT(*) } ORDER BY sum_balance',
      'ORDER BY "sum_balance" must name a selected field or aggregate of a grouped query.',
    );
    rejects(
      'orders { status COUNT(*) } ORDER BY customer.name',
      'ORDER BY "customer.name" must name a selected field or aggregate of a grouped query.',
    );
  });
});

describe('relations', () => {
  it('a to-one relation takes no clauses or aggregates', () => {
    const message =
      'A to-one relation yields one object: ORDER BY, LIMIT, OFFSET and aggregates do not apply to it.';
    rejects('orders { customer { name } ORDER BY name }', message);
    rejects('orders { customer { name } LIMIT 1 }', message);
    rejects('orders { customer { name } OFFSET 1 }', message);
    rejects('orders { customer { COUNT(*) } }', message);
    expect(() =>
      new QueryEngine(schema).plan("orders { customer (name = 'x') { name } }"),
    ).not.toThrow();
  });

  it('ORDER BY cannot go through a to-many relation', () => {
    rejects(
      'customers { id } ORDER BY orders.status',
      'ORDER BY cannot sort on "orders.status": "orders" is a to-many relation.',
    );
    rejects(
      'lines { no } ORDER BY order.customer.orders.id',
      'ORDER BY cannot sort on "order.customer.orders.id": "orders" is a to-many relation.',
    );
  });
});

describe('lenient', () => {
  it('a selection with no known field left', () => {
    rejects(
      '@lenient customers { nope other }',
      'The selection on table "customers" has no known field.',
    );
    rejects(
      '@lenient customers { id orders { nope } }',
      'The selection on table "orders" has no known field.',
    );
  });
});

describe('AFTER', () => {
  it('needs a single-column integer or text primary key', () => {
    rejects(
      "lines { no } AFTER ''",
      'AFTER needs a table with a single-column integer or text primary key; "lines" has a composite primary key.',
    );
    rejects(
      "logs { msg } AFTER ''",
      'AFTER needs a table with a single-column integer or text primary key; "logs" has no primary key.',
    );
    rejects(
      "events { what } AFTER ''",
      'AFTER needs a table with a single-column integer or text primary key; "events" has a float primary key.',
    );
    const engine = new QueryEngine(schema);
    for (const text of [
      "customers { id } AFTER ''",
      "orders { id } AFTER ''",
      "tags { id } AFTER ''",
    ]) {
      expect(() => engine.plan(text)).not.toThrow();
    }
  });

  it('cannot be combined with aggregates or ORDER BY', () => {
    rejects("customers { COUNT(*) } AFTER ''", 'AFTER cannot be combined with aggregates.');
    rejects(
      "customers { id } ORDER BY name AFTER ''",
      'AFTER pages in primary-key order and cannot be combined with ORDER BY.',
    );
  });

  it('rejects malformed cursors', () => {
    const message =
      'Malformed AFTER cursor: pass the next_cursor of the previous page, or an empty string for the first page.';
    const cursor = (json: string) => Buffer.from(json).toString('base64url');
    for (const bad of [
      'not a cursor',
      '!!!',
      cursor('{"k":'),
      cursor('null'),
      cursor('{"x":1}'),
      cursor('{"k":"a"}'),
      cursor('{"k":"12","n":true,"z":1}x'),
      cursor('{"k":"1.5","n":true}'),
    ]) {
      rejects(`customers { id } AFTER '${bad}'`, message);
    }
    // A cursor of the wrong key type is malformed too.
    rejects(`tags { id } AFTER '${cursor('{"k":1}')}'`, message);
    rejects(`tags { id } AFTER '${cursor('{"k":"1","n":true}')}'`, message);
  });
});
