/** The JSON text of every column type (spec §2 "Query data types"), read from the raw response. */
import { describe, expect, it } from 'vitest';
import { QueryEngine } from '../src/query-engine.ts';
import { compileSchema } from '../src/schema/compile-schema.ts';
import { parseSchemaConfig } from '../src/schema/schema-config.ts';
import type { ColumnType } from '../src/source-schema.ts';
import { column, loadGeneration, TEST_META, table } from './fixtures.ts';

/** The `data` text of `t { v }` over rows holding `values` (row ids from 1), in row order. */
function dataText(type: ColumnType, values: readonly unknown[], scale?: number): string {
  const source = {
    tables: [table('t', [column('id', 'int', false), column('v', type, true, scale)])],
  };
  const schema = compileSchema(source, parseSchemaConfig({}));
  const generation = loadGeneration(schema, { t: values.map((v, i) => [i + 1, v]) });
  const text = new QueryEngine(schema).execute(generation, 't { v }', TEST_META);
  expect(() => JSON.parse(text)).not.toThrow();
  return text.slice('{"data":'.length, text.indexOf(',"meta":'));
}

/** Expects each value's JSON text. */
function expectJson(type: ColumnType, cases: readonly [unknown, string][], scale?: number) {
  const text = dataText(
    type,
    cases.map(([value]) => value),
    scale,
  );
  expect(text).toBe(`[${cases.map(([, json]) => `{"v":${json}}`).join(',')}]`);
}

describe('JSON text of each column type', () => {
  it('int: a number', () => {
    expectJson('int', [
      [0, '0'],
      [-7, '-7'],
      [2_147_483_647, '2147483647'],
      [null, 'null'],
    ]);
    // Past 32 bits (INT UNSIGNED) the chunk widens to doubles: still plain integers.
    expectJson('int', [
      [3_000_000_000, '3000000000'],
      [-1, '-1'],
      [4_294_967_295, '4294967295'],
    ]);
  });

  it('bigint: a number with every digit', () => {
    expectJson('bigint', [
      ['9223372036854775807', '9223372036854775807'],
      ['-9223372036854775808', '-9223372036854775808'],
      ['9007199254740993', '9007199254740993'],
      ['42', '42'],
      ['-1', '-1'],
      [null, 'null'],
    ]);
  });

  it('float: a number; non-finite values are null', () => {
    expectJson('float', [
      [1.5, '1.5'],
      [-0.1, '-0.1'],
      [1e21, '1e+21'],
      [5e-324, '5e-324'],
      [-0, '0'],
      [Number.POSITIVE_INFINITY, 'null'],
      [Number.NaN, 'null'],
      [null, 'null'],
    ]);
  });

  it('decimal: a number keeping its declared scale and every digit', () => {
    expectJson(
      'decimal',
      [
        ['12.50', '12.50'],
        ['-0.05', '-0.05'],
        ['0.00', '0.00'],
        ['100', '100'],
        [null, 'null'],
      ],
      2,
    );
    expectJson(
      'decimal',
      [
        ['12345678901234567890.1234567890', '12345678901234567890.1234567890'],
        ['-0.0000000001', '-0.0000000001'],
        ['1.0000000000', '1.0000000000'],
      ],
      10,
    );
    // Without a declared scale, as the source wrote it.
    expectJson('decimal', [
      ['12.50', '12.50'],
      ['3', '3'],
      ['0.125', '0.125'],
    ]);
  });

  it('boolean: true or false', () => {
    expectJson('boolean', [
      [true, 'true'],
      [false, 'false'],
      [null, 'null'],
    ]);
  });

  it('string: a JSON string, escaped', () => {
    expectJson('string', [
      ['plain', '"plain"'],
      ['quote " and \\ backslash', '"quote \\" and \\\\ backslash"'],
      ['line\nbreak\ttab', '"line\\nbreak\\ttab"'],
      ['\u0001', '"\\u0001"'],
      ['Σωκράτης 😀', '"Σωκράτης 😀"'],
      ['', '""'],
      [null, 'null'],
    ]);
  });

  it('string: the same text once stored flat (past 4096 distinct values)', () => {
    const many = Array.from({ length: 5000 }, (_, i) => `s${i}`);
    const values = ['quote " here', 'é\n😀', ...many];
    const text = dataText('string', values);
    expect(text.startsWith('[{"v":"quote \\" here"},{"v":"é\\n😀"},{"v":"s0"}')).toBe(true);
  });

  it('json: the JSON text as a string', () => {
    expectJson('json', [
      ['{"a":1}', '"{\\"a\\":1}"'],
      ['[1, "x"]', '"[1, \\"x\\"]"'],
      ['null', '"null"'],
      [null, 'null'],
    ]);
  });

  it('date: YYYY-MM-DD', () => {
    expectJson('date', [
      ['2024-02-29', '"2024-02-29"'],
      ['1969-12-31', '"1969-12-31"'],
      ['0001-01-01', '"0001-01-01"'],
      ['9999-12-31', '"9999-12-31"'],
      [null, 'null'],
    ]);
  });

  it('timestamp: ISO 8601 UTC with milliseconds (epoch microseconds stored)', () => {
    expectJson('timestamp', [
      [0, '"1970-01-01T00:00:00.000Z"'],
      [Date.UTC(2024, 4, 1, 12, 30, 5, 7) * 1000, '"2024-05-01T12:30:05.007Z"'],
      [-1000, '"1969-12-31T23:59:59.999Z"'],
      [null, 'null'],
    ]);
  });

  it('time: seconds as a number', () => {
    expectJson('time', [
      [0, '0'],
      [3600.5, '3600.5'],
      [86_399, '86399'],
      [null, 'null'],
    ]);
  });

  it('binary: lowercase hex', () => {
    expectJson('binary', [
      [new Uint8Array([0, 255, 16, 171]), '"00ff10ab"'],
      [new Uint8Array([]), '""'],
      [Buffer.from('hi'), '"6869"'],
      [null, 'null'],
    ]);
  });

  it('keeps the selection order of fields', () => {
    const source = {
      tables: [
        table('t', [column('id', 'int', false), column('a', 'string'), column('b', 'boolean')]),
      ],
    };
    const schema = compileSchema(source, parseSchemaConfig({}));
    const generation = loadGeneration(schema, { t: [[1, 'x', true]] });
    const text = new QueryEngine(schema).execute(generation, 't { b id a }', TEST_META);
    expect(text.startsWith('{"data":[{"b":true,"id":1,"a":"x"}]')).toBe(true);
  });
});
