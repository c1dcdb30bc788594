/** `writeValue` writes the bytes of `valueJson`'s text, for values of every kind of chunk. */
import fc from 'fast-check';
import { describe, expect, it } from 'vitest';
import { JsonWriter } from '../src/exec/json-writer.ts';
import { valueJson } from '../src/exec/value-json.ts';
import { valueWriter, writeValue } from '../src/exec/value-writer.ts';
import { compileSchema } from '../src/schema/compile-schema.ts';
import { parseSchemaConfig } from '../src/schema/schema-config.ts';
import type { ColumnType, SourceSchema } from '../src/source-schema.ts';
import { civilFromDays } from '../src/storage/civil-date.ts';
import type { Chunk } from '../src/storage/table-data.ts';
import { buildGeneration, column, table } from './fixtures.ts';

/** Expects every value of a one-column table holding `values` written as `valueJson` says. */
function expectSameText(type: ColumnType, values: readonly unknown[], scale?: number): void {
  expectSameIn(
    { tables: [table('t', [column('id', 'int', false), column('v', type, true, scale)])] },
    values,
  );
}

/** The same for column `v` of table `t` of `source`. */
function expectSameIn(source: SourceSchema, values: readonly unknown[]): void {
  const schema = compileSchema(source, parseSchemaConfig({}));
  const generation = buildGeneration(schema, { t: values.map((v, i) => [i + 1, v]) }, 64);
  const snapshot = generation.table('t');
  const compiled = snapshot.schema.columns[1]!;
  const out = new JsonWriter(Number.MAX_SAFE_INTEGER);
  const typed = new JsonWriter(Number.MAX_SAFE_INTEGER);
  const write = valueWriter(compiled);
  const expected: string[] = [];
  for (const chunk of snapshot.data.chunks as Chunk[]) {
    const values = chunk.columns[1]!;
    for (let offset = 0; offset < chunk.length; offset++) {
      if (expected.length > 0) out.write(',');
      if (expected.length > 0) typed.write(',');
      writeValue(out, compiled, values, offset);
      write(typed, compiled, values, offset);
      expected.push(valueJson(compiled, values, offset));
    }
  }
  expect(out.finish().text()).toBe(expected.join(','));
  expect(typed.finish().text()).toBe(expected.join(','));
}

const text = fc.oneof(
  fc.string({ unit: 'binary' }),
  fc.string({
    unit: fc.constantFrom('"', '\\', '\n', '\u0000', '\u001f', '\u007f', 'é', '😀', 'a'),
  }),
);

describe('writeValue', () => {
  it('writes numbers of every numeric type as valueJson does', () => {
    fc.assert(
      fc.property(fc.array(fc.integer({ min: -(2 ** 31), max: 2 ** 31 - 1 })), (values) =>
        expectSameText('int', values),
      ),
    );
    fc.assert(
      fc.property(fc.array(fc.double({ noNaN: true, noDefaultInfinity: true })), (values) =>
        expectSameText('float', values),
      ),
    );
    fc.assert(
      fc.property(fc.array(fc.bigInt({ min: -(2n ** 70n), max: 2n ** 70n })), (values) =>
        expectSameText(
          'bigint',
          values.map((value) => String(value)),
        ),
      ),
    );
    expectSameText('float', [0, -0, 1e-7, 1e21, 1645.3942, null, 0.1]);
    expectSameText('time', [0, 1.5, 86399.999999, null]);
  });

  it('writes text of any characters, many distinct values or few, as valueJson does', () => {
    fc.assert(
      fc.property(fc.array(text, { maxLength: 200 }), (values) => expectSameText('string', values)),
    );
    fc.assert(
      fc.property(
        fc.array(fc.constantFrom('a"b', 'x\\y', 'é\n', '😀', ''), { maxLength: 200 }),
        (values) => expectSameText('string', values),
      ),
    );
    fc.assert(
      fc.property(fc.array(text, { maxLength: 50 }), (values) => expectSameText('json', values)),
    );
  });

  it('writes timestamps of every precision as valueJson does', () => {
    const instants = fc.array(
      fc.oneof(
        fc.maxSafeInteger(),
        fc.integer({ min: 1_600_000_000_000_000, max: 1_800_000_000_000_000 }),
        fc.double({ noNaN: true }),
      ),
    );
    for (const precision of [undefined, 0, 3, 6]) {
      const source = {
        tables: [
          table('t', [
            column('id', 'int', false),
            {
              ...column('v', 'timestamp', true),
              ...(precision === undefined ? {} : { precision }),
            },
          ]),
        ],
      };
      fc.assert(fc.property(instants, (values) => expectSameIn(source, [...values, null])));
    }
  });

  it('writes timestamps before 1970 and outside the years 0..9999 as valueJson does', () => {
    const instants = [
      -1,
      0,
      -86_400_000_000,
      Date.parse('1899-12-31T23:59:59.999Z') * 1000 + 999,
      Date.parse('0000-03-01T00:00:00.000Z') * 1000,
      Date.parse('0000-03-01T00:00:00.000Z') * 1000 - 1,
      Date.parse('9999-12-31T23:59:59.999Z') * 1000 + 999,
      Date.parse('9999-12-31T23:59:59.999Z') * 1000 + 1000,
      -(2 ** 53) + 1,
      null,
    ];
    for (const precision of [undefined, 3, 6]) {
      const source = {
        tables: [
          table('t', [
            column('id', 'int', false),
            {
              ...column('v', 'timestamp', true),
              ...(precision === undefined ? {} : { precision }),
            },
          ]),
        ],
      };
      expectSameIn(source, instants);
    }
  });

  it('writes decimals from their units, and kept source texts, as valueJson does', () => {
    const edges = [
      '0.00',
      '0.05',
      '-0.05',
      '12.50',
      '-12.50',
      '14455.20',
      '90071992547409.91',
      '-90071992547409.91',
      null,
      // Kept as the source wrote them: past 2^53 units, or not the units' canonical text.
      '90071992547409.92',
      '12.5',
      '-0.00',
      '012.50',
      '123456789012345678901234567890.12',
    ];
    expectSameText('decimal', edges, 2);
    expectSameText('decimal', ['0', '-7', '42', '9007199254740991', '9007199254740993', null], 0);
    expectSameText('decimal', ['0.000001', '-0.000001', '1.000000', '-123.456789', null], 6);
    expectSameText('decimal', ['0.0000000000000000000001', '-0.0000000000000000000123'], 22);
    for (const scale of [0, 2, 4, 9, 18, 22]) {
      fc.assert(
        fc.property(
          fc.array(fc.option(fc.bigInt({ min: -(2n ** 60n), max: 2n ** 60n }), { freq: 8 }), {
            maxLength: 40,
          }),
          (values) =>
            expectSameText(
              'decimal',
              values.map((v) => unitsText(v, scale)),
              scale,
            ),
        ),
        { numRuns: 50 },
      );
    }
  });

  it('writes dates, booleans and NULLs as valueJson does', () => {
    expectSameText('date', ['2024-02-29', '1970-01-01', '0001-01-01', '9999-12-31', null]);
    expectSameText('date', [
      '1969-12-31',
      '1899-12-31',
      '1900-01-01',
      '2099-12-31',
      '2100-01-01',
      '0000-01-01',
      '0000-02-29',
      '0000-03-01',
      '-0001-12-31',
      '10000-01-01',
      null,
    ]);
    fc.assert(
      fc.property(fc.array(fc.integer({ min: -800_000, max: 3_000_000 })), (days) =>
        expectSameText(
          'date',
          days.map((day) => civilFromDays(day)),
        ),
      ),
    );
    expectSameText('boolean', [true, false, null]);
  });
});

/** The canonical text of `units` at `scale` (NULL for null), by BigInt arithmetic. */
function unitsText(units: bigint | null, scale: number): string | null {
  if (units === null) return null;
  const digits = (units < 0n ? -units : units).toString().padStart(scale + 1, '0');
  const cut = digits.length - scale;
  const text = scale === 0 ? digits : `${digits.slice(0, cut)}.${digits.slice(cut)}`;
  return units < 0n ? `-${text}` : text;
}
