import { describe, expect, it } from 'vitest';
import { SchemaNumbers } from '../src/column-numbers.ts';
import { exactRows, plainNumbers } from '../src/exact-rows.ts';
import { readJson } from '../src/json-reader.ts';

/** A `/schema` answer as the instance writes it (docs/instance-api.md, "Endpoints"). */
const SCHEMA = new SchemaNumbers({
  tables: [
    {
      name: 'accounts',
      columns: [
        { name: 'id', type: 'bigint', nullable: false, sourceType: 'bigint', primaryKey: true },
        { name: 'balance', type: 'decimal', nullable: true, sourceType: 'decimal(30,4)' },
        { name: 'visits', type: 'int', nullable: false, sourceType: 'int' },
        { name: 'ratio', type: 'float', nullable: true, sourceType: 'double' },
        { name: 'name', type: 'string', nullable: true, sourceType: 'varchar(20)' },
        { name: 'ids', type: 'array', elementType: 'bigint', nullable: true, sourceType: '_int8' },
        { name: '__proto__', type: 'decimal', nullable: true, sourceType: 'numeric' },
      ],
      relations: [{ name: 'payments', kind: 'to-many', table: 'payments' }],
    },
    {
      name: 'payments',
      columns: [
        { name: 'id', type: 'int', nullable: false, sourceType: 'int' },
        { name: 'amount', type: 'decimal', nullable: false, sourceType: 'decimal(10,2)' },
      ],
      relations: [{ name: 'account', kind: 'to-one', table: 'accounts' }],
    },
  ],
});

function rows(text: string, table = 'accounts'): { rows: unknown[]; known: boolean } {
  const read = readJson(text) as unknown[];
  const known = exactRows(read, table, SCHEMA);
  return { rows: read, known };
}

describe('exactRows', () => {
  it('gives BIGINT columns bigint and DECIMAL columns their digits, whatever the size', () => {
    const result = rows(
      '[{"id":9007199254740993,"balance":1234567890123456.7891,"visits":3,"ratio":0.5,"name":"7"},' +
        '{"id":2,"balance":12.50,"visits":4,"ratio":null,"name":null},' +
        '{"id":3,"balance":3,"visits":5,"ratio":1e+21,"name":"x"}]',
    );
    expect(result.known).toBe(true);
    expect(result.rows).toEqual([
      { id: 9007199254740993n, balance: '1234567890123456.7891', visits: 3, ratio: 0.5, name: '7' },
      { id: 2n, balance: '12.50', visits: 4, ratio: null, name: null },
      { id: 3n, balance: '3', visits: 5, ratio: 1e21, name: 'x' },
    ]);
  });

  it('follows relations to their table, and array columns to their elements', () => {
    const { rows: read } = rows(
      '[{"ids":[1,[18446744073709551615,null]],"payments":[{"id":1,"amount":0.10,' +
        '"account":{"id":5,"balance":-0.0001}}]}]',
    );
    expect(read).toEqual([
      {
        ids: [1n, [18446744073709551615n, null]],
        payments: [{ id: 1, amount: '0.10', account: { id: 5n, balance: '-0.0001' } }],
      },
    ]);
  });

  it('types aggregates by what they return', () => {
    const { rows: read, known } = rows(
      '[{"name":"a","count":2,"sum_visits":18446744073709551616,"sum_balance":13.75,' +
        '"avg_balance":6.875000,"avg_visits":2.5,"sum_ratio":0.75,"avg_id":3002399751580331.0000}]',
    );
    expect(known).toBe(true);
    expect(read).toEqual([
      {
        name: 'a',
        count: 2,
        sum_visits: 18446744073709551616n,
        sum_balance: '13.75',
        avg_balance: '6.875000',
        avg_visits: 2.5,
        sum_ratio: 0.75,
        avg_id: 3002399751580331,
      },
    ]);
  });

  it('types MIN and MAX as their column, COUNT(DISTINCT) as a number', () => {
    const { rows: read, known } = rows(
      '[{"min_id":9007199254740993,"max_balance":12.50,"min_visits":3,"max_name":"z",' +
        '"count_distinct_balance":2,"min_nope":1.50}]',
    );
    expect(known).toBe(false);
    expect(read).toEqual([
      {
        min_id: 9007199254740993n,
        max_balance: '12.50',
        min_visits: 3,
        max_name: 'z',
        count_distinct_balance: 2,
        min_nope: 1.5,
      },
    ]);
  });

  it('gives a field the schema lacks plain numbers, and says so', () => {
    const { rows: read, known } = rows('[{"id":1,"added":12.50,"more":{"x":9007199254740993}}]');
    expect(known).toBe(false);
    expect(read).toEqual([{ id: 1n, added: 12.5, more: { x: 9007199254740992 } }]);
  });

  it('sets a __proto__ column as an own property', () => {
    const { rows: read } = rows('[{"__proto__":1.50}]');
    const row = read[0] as object;
    expect(Object.getPrototypeOf(row)).toBe(Object.prototype);
    expect(Object.getOwnPropertyDescriptor(row, '__proto__')?.value).toBe('1.50');
  });

  it('plainNumbers gives every kept number as the double JSON.parse reads', () => {
    const text = '{"a":[12.50,{"b":9007199254740993}],"c":-0}';
    expect(plainNumbers(readJson(text))).toEqual(JSON.parse(text));
    const deep = readJson(`${'['.repeat(100_000)}1.50${']'.repeat(100_000)}`);
    expect(() => plainNumbers(deep)).not.toThrow();
  });

  it('refuses a document that is not a /schema answer', () => {
    expect(() => new SchemaNumbers({ data: [] })).toThrow(TypeError);
    expect(() => new SchemaNumbers({ tables: [{ name: 1, columns: [] }] })).toThrow(TypeError);
  });
});
