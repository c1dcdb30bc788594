import { describe, expect, it } from 'vitest';
import type { CompiledColumn } from '../src/schema/compiled-schema.ts';
import type { ColumnType } from '../src/source-schema.ts';
import { ColumnBuilder, MAX_DICTIONARY } from '../src/storage/column-builder.ts';
import { readCanonical } from '../src/storage/column-reader.ts';
import { replaceColumnValues } from '../src/storage/replace-rows.ts';

function column(type: ColumnType, scale?: number): CompiledColumn {
  return { name: 'c', sourceName: 'c', type, nullable: true, sourceType: type, scale, index: 0 };
}

function build(type: ColumnType, values: unknown[], scale?: number) {
  const builder = new ColumnBuilder(type, scale);
  for (const value of values) builder.append(value);
  return builder.finish();
}

function read(type: ColumnType, chunk: ReturnType<typeof build>, length: number, scale?: number) {
  return Array.from({ length }, (_, offset) => readCanonical(chunk, type, scale, offset));
}

describe('replaceColumnValues', () => {
  it('rewrites flat text rows, keeping the untouched ones byte for byte', () => {
    const values = Array.from({ length: 5000 }, (_, i) => `value ${i} ${'é'.repeat(i % 5)}`);
    const chunk = build('string', values);
    expect(chunk.kind).toBe('bytes');
    const next = replaceColumnValues(
      chunk,
      column('string'),
      values.length,
      new Map<number, unknown>([
        [0, 'first 🙂'],
        [2500, null],
        [4999, ''],
      ]),
    );
    const expected = [...values];
    expected[0] = 'first 🙂';
    expected[2500] = null as unknown as string;
    expected[4999] = '';
    expect(read('string', next, values.length)).toEqual(expected);
    expect(read('string', chunk, values.length)).toEqual(values);
  });

  it('grows a dictionary copy, and falls back to a rebuild past its limit', () => {
    const chunk = build('string', ['a', 'b', 'a']);
    const next = replaceColumnValues(chunk, column('string'), 3, new Map([[1, 'c']]));
    expect(read('string', next, 3)).toEqual(['a', 'c', 'a']);
    expect(chunk.kind === 'dict' && chunk.dictionary).toEqual(['a', 'b']);
    const full = build(
      'string',
      Array.from({ length: MAX_DICTIONARY }, (_, i) => `v${i}`),
    );
    const rebuilt = replaceColumnValues(
      full,
      column('string'),
      MAX_DICTIONARY,
      new Map([[0, 'new']]),
    );
    expect(readCanonical(rebuilt, 'string', undefined, 0)).toBe('new');
    expect(readCanonical(rebuilt, 'string', undefined, 1)).toBe('v1');
  });

  it('widens integers past 32 bits, keeps exact BIGINT and DECIMAL text, sets and clears NULLs', () => {
    const ints = build('int', [1, 2, null]);
    const widened = replaceColumnValues(
      ints,
      column('int'),
      3,
      new Map<number, unknown>([
        [0, 4294967295],
        [2, 7],
      ]),
    );
    expect(read('int', widened, 3)).toEqual([4294967295, 2, 7]);
    const big = build('bigint', ['1', '2']);
    const exact = replaceColumnValues(
      big,
      column('bigint'),
      2,
      new Map([[1, '18446744073709551615']]),
    );
    expect(read('bigint', exact, 2)).toEqual(['1', '18446744073709551615']);
    const back = replaceColumnValues(exact, column('bigint'), 2, new Map([[1, '5']]));
    expect(read('bigint', back, 2)).toEqual(['1', '5']);
    const decimals = build('decimal', ['1.50', '2.25'], 2);
    const updated = replaceColumnValues(
      decimals,
      column('decimal', 2),
      2,
      new Map<number, unknown>([
        [0, '12345678901234567890.12'],
        [1, null],
      ]),
    );
    expect(read('decimal', updated, 2, 2)).toEqual(['12345678901234567890.12', null]);
  });

  it('rewrites dates, timestamps and booleans', () => {
    const dates = build('date', ['2024-01-01', '2024-01-02']);
    expect(
      read('date', replaceColumnValues(dates, column('date'), 2, new Map([[1, '1999-12-31']])), 2),
    ).toEqual(['2024-01-01', '1999-12-31']);
    const flags = build('boolean', [true, false]);
    expect(
      read('boolean', replaceColumnValues(flags, column('boolean'), 2, new Map([[0, false]])), 2),
    ).toEqual([false, false]);
    const times = build('timestamp', [0, 1000]);
    expect(
      read('timestamp', replaceColumnValues(times, column('timestamp'), 2, new Map([[0, 5]])), 2),
    ).toEqual([5, 1000]);
  });
});

describe('updates in place', () => {
  it('share the columns an update did not change, and see DECIMAL changes past double precision', async () => {
    const { compileSchema } = await import('../src/schema/compile-schema.ts');
    const { parseSchemaConfig } = await import('../src/schema/schema-config.ts');
    const { GenerationBuilder, nextGeneration } = await import(
      '../src/storage/generation-builder.ts'
    );
    const schema = compileSchema(
      {
        tables: [
          {
            name: 't',
            columns: [
              { name: 'id', type: 'int', nullable: false, sourceType: 'int' },
              { name: 'qty', type: 'int', nullable: false, sourceType: 'int' },
              {
                name: 'big',
                type: 'decimal',
                nullable: false,
                sourceType: 'decimal(30,2)',
                scale: 2,
              },
            ],
            primaryKey: ['id'],
            uniqueKeys: [],
            foreignKeys: [],
            estimatedRows: null,
          },
        ],
      },
      parseSchemaConfig({}),
    );
    const builder = new GenerationBuilder(schema);
    builder
      .loader('t')
      .appendRows(Array.from({ length: 10 }, (_, i) => [i, i, '12345678901234567890.12']));
    const first = builder.finish(1);
    const next = nextGeneration(
      first,
      new Map([
        ['t', [{ op: 'update' as const, before: null, after: [3, 99, '12345678901234567890.13'] }]],
      ]),
      2,
    );
    const [before, after] = [first, next].map(
      (generation) => generation.table('t').data.chunks[0]!,
    );
    expect(after!.columns[0]).toBe(before!.columns[0]);
    expect(after!.columns[1]).not.toBe(before!.columns[1]);
    expect(readCanonical(after!.columns[2]!, 'decimal', 2, 3)).toBe('12345678901234567890.13');
    expect(readCanonical(after!.columns[1]!, 'int', undefined, 3)).toBe(99);
  });
});

describe('sameContent', () => {
  it('tells a fresh load of unchanged data from a changed one', async () => {
    const { shop, shopRows, loadGeneration } = await import('./fixtures.ts');
    const { sameContent } = await import('../src/storage/same-content.ts');
    const { schema, generation } = shop();
    expect(sameContent(generation, loadGeneration(schema, shopRows, 2))).toBe(true);
    const changed = {
      ...shopRows,
      customers: shopRows.customers!.map((row, i) => (i === 1 ? [2, 'Bjork', 'IS'] : row)),
    };
    expect(sameContent(generation, loadGeneration(schema, changed, 2))).toBe(false);
    const fewer = { ...shopRows, orders: shopRows.orders!.slice(1) };
    expect(sameContent(generation, loadGeneration(schema, fewer, 2))).toBe(false);
  });
});
