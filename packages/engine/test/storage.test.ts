import { describe, expect, it } from 'vitest';
import { QueryEngine } from '../src/query-engine.ts';
import { compileSchema } from '../src/schema/compile-schema.ts';
import { parseSchemaConfig } from '../src/schema/schema-config.ts';
import type { ColumnType } from '../src/source-schema.ts';
import type { RowChange } from '../src/storage/apply-changes.ts';
import { ColumnBuilder } from '../src/storage/column-builder.ts';
import type { ColumnChunk } from '../src/storage/column-chunk.ts';
import { isNullAt, readCanonical, readComparable } from '../src/storage/column-reader.ts';
import { canonicalToComparable } from '../src/storage/comparable.ts';
import { ExactTexts } from '../src/storage/exact-texts.ts';
import type { Generation } from '../src/storage/generation.ts';
import { nextGeneration } from '../src/storage/generation-builder.ts';
import { CHUNK_ROWS } from '../src/storage/table-data.ts';
import { column, loadGeneration, runQuery, TEST_META, table } from './fixtures.ts';

function build(type: ColumnType, values: readonly unknown[], scale?: number): ColumnChunk {
  const builder = new ColumnBuilder(type, scale);
  for (const value of values) builder.append(value);
  expect(builder.length).toBe(values.length);
  return builder.finish();
}

function canonical(chunk: ColumnChunk, type: ColumnType, scale?: number): unknown[] {
  const length =
    chunk.kind === 'bytes'
      ? chunk.offsets.length - 1
      : chunk.kind === 'dict'
        ? chunk.codes.length
        : chunk.values.length;
  return Array.from({ length }, (_, offset) => readCanonical(chunk, type, scale, offset));
}

describe('int columns', () => {
  it('stay int32 while every value fits', () => {
    const chunk = build('int', [0, -2_147_483_648, 2_147_483_647, null, 5]);
    expect(chunk.kind).toBe('int32');
    expect(canonical(chunk, 'int')).toEqual([0, -2_147_483_648, 2_147_483_647, null, 5]);
  });

  it('widen to float64 at the first value past 32 bits, keeping earlier values and NULLs', () => {
    const chunk = build('int', [1, null, -7, 3_000_000_000, 4, null, 4_294_967_295]);
    expect(chunk.kind).toBe('float64');
    expect(canonical(chunk, 'int')).toEqual([1, null, -7, 3_000_000_000, 4, null, 4_294_967_295]);
    expect([0, 1, 2, 3, 4, 5, 6].map((i) => isNullAt(chunk, i))).toEqual([
      false,
      true,
      false,
      false,
      false,
      true,
      false,
    ]);
  });

  it('widen for a fraction or a value below -2^31', () => {
    expect(build('int', [1, -2_147_483_649]).kind).toBe('float64');
    expect(build('int', [1, 2.5]).kind).toBe('float64');
  });

  it('answer queries the same before and after widening', () => {
    const source = { tables: [table('t', [column('id', 'int', false), column('n', 'int')])] };
    const schema = compileSchema(source, parseSchemaConfig({}));
    const rows = [
      [1, 5],
      [2, null],
      [3, 3_000_000_000],
      [4, -3_000_000_000],
    ];
    const generation = loadGeneration(schema, { t: rows });
    expect(runQuery(schema, generation, 't (n > 4) { id n }').data).toEqual([
      { id: 1, n: 5 },
      { id: 3, n: 3_000_000_000 },
    ]);
    expect(runQuery(schema, generation, 't { id } ORDER BY n DESC').data).toEqual([
      { id: 2 },
      { id: 3 },
      { id: 1 },
      { id: 4 },
    ]);
    expect(runQuery(schema, generation, 't { SUM(n) }').data).toEqual([{ sum_n: 5 }]);
  });
});

describe('text columns', () => {
  const distinct = (n: number, prefix = 'v') =>
    Array.from({ length: n }, (_, i) => `${prefix}${i}`);

  it('stay a dictionary up to 4096 distinct values, however many rows', () => {
    const values = [...distinct(4096), ...distinct(4096), null];
    const chunk = build('string', values);
    expect(chunk.kind).toBe('dict');
    if (chunk.kind === 'dict') expect(chunk.dictionary.length).toBe(4096);
    expect(canonical(chunk, 'string')).toEqual(values);
  });

  it('switch to flat UTF-8 at the 4097th distinct value, keeping every earlier value and NULL', () => {
    const values: (string | null)[] = [
      null,
      '',
      'é',
      '😀',
      'e\u0301',
      ...distinct(4092),
      null,
      'past',
      'v1',
    ];
    const chunk = build('string', values);
    expect(chunk.kind).toBe('bytes');
    if (chunk.kind === 'bytes') expect(chunk.encoding).toBe('utf8');
    expect(canonical(chunk, 'string')).toEqual(values);
    expect(readComparable(chunk, 3)).toBe('😀');
    expect(readComparable(chunk, 0)).toBeNull();
    expect(isNullAt(chunk, values.length - 3)).toBe(true);
  });

  it('keep flat text exact over runs of ASCII, multibyte text and NULLs, a chunk long', () => {
    // Runs of a few thousand rows: flat text is encoded a run of rows at a time, ASCII-only
    // runs in one copy, others text by text; every mix must read back the same.
    const values: (string | null)[] = distinct(4097, 'first ');
    for (let i = 0; values.length < CHUNK_ROWS; i++) {
      const run = Math.floor(i / 1500) % 4;
      if (i % 7 === 0) values.push(null);
      else if (run === 1 && i % 3 === 0) values.push(`ünïcödé ${i} 😀 日本`);
      else if (run === 3) values.push(i % 2 === 0 ? '' : `\u0000 tab\t ${i}`);
      else values.push(`ascii ${i}`);
    }
    const chunk = build('string', values);
    expect(chunk.kind).toBe('bytes');
    expect(canonical(chunk, 'string')).toEqual(values);
  });

  it('JSON columns switch the same way and keep their text', () => {
    const values = distinct(5000).map((v) => `{"k":"${v}"}`);
    const chunk = build('json', values);
    expect(chunk.kind).toBe('bytes');
    expect(canonical(chunk, 'json')).toEqual(values);
  });

  it('answer queries the same from a dictionary and from flat text', () => {
    const source = { tables: [table('t', [column('id', 'int', false), column('s', 'string')])] };
    const schema = compileSchema(source, parseSchemaConfig({}));
    const rows: unknown[][] = [
      [1, 'Zeta'],
      [2, 'ésprit'],
      [3, null],
      [4, '\uFFFF'],
      [5, '😀'],
    ];
    const small = loadGeneration(schema, { t: rows });
    const big = loadGeneration(schema, {
      t: [...rows, ...distinct(5000, 'x').map((s, i) => [100 + i, s])],
    });
    const queries = [
      "t (s LIKE '%t%') { id s } ORDER BY s",
      "t (s ILIKE 'ÉSPRIT' OR s = 'Zeta') { id }",
      "t (s > 'x' AND s IS NOT NULL) { id } ORDER BY s DESC LIMIT 3",
      "t (s IN ('😀', '\uFFFF')) { id } ORDER BY s",
      't (s IS NULL) { id }',
    ];
    expect(big.table('t').data.chunks[0]?.columns[1]?.kind).toBe('bytes');
    expect(small.table('t').data.chunks[0]?.columns[1]?.kind).toBe('dict');
    for (const text of queries) {
      const expected = runQuery(schema, small, text).data;
      const actual = runQuery(schema, big, text).data.filter((row: { id: number }) => row.id < 100);
      expect(actual, text).toEqual(expected.filter((row: { id: number }) => row.id < 100));
    }
    // Code point order: U+FFFF sorts before the astral 😀.
    expect(runQuery(schema, small, "t (s IN ('😀', '\uFFFF')) { id } ORDER BY s").data).toEqual([
      { id: 4 },
      { id: 5 },
    ]);
  });
});

describe('chunks', () => {
  const source = { tables: [table('t', [column('id', 'int', false), column('s', 'string')])] };
  const schema = compileSchema(source, parseSchemaConfig({}));
  const count = CHUNK_ROWS + 1000;
  const generation = loadGeneration(schema, {
    t: Array.from({ length: count }, (_, i) => [i, i % 3 === 0 ? null : `r${i % 10}`]),
  });

  it('hold at most 65536 rows', () => {
    const chunks = generation.table('t').data.chunks;
    expect(chunks.map((c) => c.length)).toEqual([CHUNK_ROWS, 1000]);
    expect(generation.rowCounts()).toEqual({ t: count });
  });

  it('are read across the boundary by scans, indexes and sorts', () => {
    expect(runQuery(schema, generation, 't (id = 65536) { id s }').data).toEqual([
      { id: 65536, s: 'r6' },
    ]);
    expect(runQuery(schema, generation, 't (id IN (65535, 65536, 66535)) { id }').data).toEqual([
      { id: 65535 },
      { id: 65536 },
      { id: 66535 },
    ]);
    expect(runQuery(schema, generation, 't (id >= 65534) { id } LIMIT 3').data).toEqual([
      { id: 65534 },
      { id: 65535 },
      { id: 65536 },
    ]);
    expect(runQuery(schema, generation, 't { id } ORDER BY id DESC LIMIT 2').data).toEqual([
      { id: count - 1 },
      { id: count - 2 },
    ]);
    const page = runQuery(schema, generation, "t { id } LIMIT 2 AFTER ''").meta.pagination;
    expect(page.total_matched).toBe(count);
    expect(runQuery(schema, generation, 't (s IS NULL) { COUNT(*) }').data).toEqual([
      { count: Math.ceil(count / 3) },
    ]);
  });

  it('are shared by the next generation unless changed', () => {
    const next = nextGeneration(
      generation,
      new Map([['t', [{ op: 'delete', row: [65537, null] }]]]),
      2,
    );
    const before = generation.table('t').data.chunks;
    const after = next.table('t').data.chunks;
    expect(after[0]).toBe(before[0]);
    expect(after[1]).not.toBe(before[1]);
    expect(after[1]?.deletedCount).toBe(1);
    expect(runQuery(schema, next, 't (id >= 65536) { COUNT(*) }').data).toEqual([{ count: 999 }]);
  });
});

describe('exact numbers', () => {
  const big = [
    '9007199254740992',
    '9007199254740993',
    '-9223372036854775808',
    '9223372036854775807',
    '42',
  ];

  it('keep every digit of a BIGINT past 2^53', () => {
    const chunk = build('bigint', [...big, null]);
    expect(canonical(chunk, 'bigint')).toEqual([...big, null]);
    // In the comparison domain, integers no double holds exactly are bigints.
    expect(readComparable(chunk, 0)).toBe(9007199254740992);
    expect(readComparable(chunk, 1)).toBe(9007199254740993n);
    expect(readComparable(chunk, 2)).toBe(-(2 ** 63));
    expect(readComparable(chunk, 3)).toBe(9223372036854775807n);
    expect(readComparable(chunk, 4)).toBe(42);
    expect(canonicalToComparable('bigint', '9007199254740993')).toBe(9007199254740993n);
    expect(canonicalToComparable('bigint', '9007199254740992')).toBe(9007199254740992);
  });

  it('find a kept text by its row offset, among few texts (searched) or many (a bitmap first)', () => {
    for (const count of [1, 3, 15, 16, 17, 500, 6554]) {
      const texts = new Map<number, string>();
      // An odd step walks every offset once: `count` distinct offsets, scattered.
      for (let k = 0; k < count; k++) {
        const offset = (k * 40503 + count * 7) & (CHUNK_ROWS - 1);
        texts.set(offset, `${9007199254740993n + BigInt(offset)}`);
      }
      const exact = ExactTexts.of(texts) as ExactTexts;
      // Every offset's look-up, compared at once (an expect per offset takes seconds).
      const found: (string | null)[] = [];
      const expected: (string | null)[] = [];
      for (let offset = 0; offset < CHUNK_ROWS; offset++) {
        const i = exact.indexOf(offset);
        const text = i < 0 ? null : exact.bytes.toString('latin1', exact.start(i), exact.end(i));
        found.push(exact.has(offset) === i >= 0 ? text : 'has and indexOf disagree');
        expected.push(texts.get(offset) ?? null);
      }
      expect(found).toEqual(expected);
      for (const [offset, text] of texts) expect(exact.get(offset)).toBe(text);
      expect(exact.has(CHUNK_ROWS + 8)).toBe(false);
      expect(exact.ascii).toBe(true);
    }
    expect(ExactTexts.of(new Map([[3, '\u00e91']]))?.ascii).toBe(false);
  });

  it('keep a BIGINT exactly even when its double prints the same digits', () => {
    // The nearest double is 61974624499679968, which `String` prints as 61974624499679970.
    expect(String(Number('61974624499679970'))).toBe('61974624499679970');
    const chunk = build('bigint', ['61974624499679970', '61974624499679968']);
    expect(readComparable(chunk, 0)).toBe(61974624499679970n);
    expect(readComparable(chunk, 1)).toBe(61974624499679968);
    expect(canonical(chunk, 'bigint')).toEqual(['61974624499679970', '61974624499679968']);
    const source = { tables: [table('t', [column('id', 'int', false), column('n', 'bigint')])] };
    const schema = compileSchema(source, parseSchemaConfig({}));
    const generation = loadGeneration(schema, {
      t: [
        [1, '61974624499679970'],
        [2, '61974624499679968'],
        [3, '-73'],
      ],
    });
    expect(runQuery(schema, generation, 't (n = 61974624499679970) { id }').data).toEqual([
      { id: 1 },
    ]);
    expect(runQuery(schema, generation, 't (n < 61974624499679970) { id }').data).toEqual([
      { id: 2 },
      { id: 3 },
    ]);
    const text = new QueryEngine(schema).execute(generation, 't { SUM(n) }', TEST_META);
    expect(text).toContain('"sum_n":123949248999359865');
  });

  it('keep every digit of DECIMAL(30,10), and its scale', () => {
    const values = [
      '12345678901234567890.1234567890',
      '-0.0000000001',
      '1.5000000000',
      '0.0000000000',
      '99999999999999999999.9999999999',
    ];
    const chunk = build('decimal', [...values, null], 10);
    expect(canonical(chunk, 'decimal', 10)).toEqual([...values, null]);
  });

  it('keep a decimal written without a declared scale as written', () => {
    expect(canonical(build('decimal', ['12.50', '7', '0.1']), 'decimal')).toEqual([
      '12.50',
      '7',
      '0.1',
    ]);
  });

  it('compare, index and join BIGINT keys past 2^53 exactly', () => {
    const source = {
      tables: [
        table('a', [column('id', 'bigint', false), column('s', 'string')]),
        table('b', [column('id', 'int', false), column('a_id', 'bigint')], {
          foreignKeys: [
            { name: 'fk', columns: ['a_id'], referencedTable: 'a', referencedColumns: ['id'] },
          ],
        }),
      ],
    };
    const schema = compileSchema(source, parseSchemaConfig({}));
    const generation = loadGeneration(schema, {
      a: [
        ['9007199254740993', 'odd'],
        ['9007199254740992', 'even'],
        ['9007199254740994', 'next'],
      ],
      b: [
        [1, '9007199254740992'],
        [2, '9007199254740993'],
      ],
    });
    const ids = (text: string) => runQuery(schema, generation, text).data;
    expect(ids('a (id = 9007199254740992) { s }')).toEqual([{ s: 'even' }]);
    expect(ids('a (id = 9007199254740993) { s }')).toEqual([{ s: 'odd' }]);
    expect(ids('a (id > 9007199254740992) { s } ORDER BY id')).toEqual([
      { s: 'odd' },
      { s: 'next' },
    ]);
    expect(ids('a (id BETWEEN 9007199254740993 AND 9007199254740993) { s }')).toEqual([
      { s: 'odd' },
    ]);
    expect(ids('a (id IN (9007199254740994, 1)) { s }')).toEqual([{ s: 'next' }]);
    expect(ids('a (id != 9007199254740993) { s }')).toEqual([{ s: 'even' }, { s: 'next' }]);
    expect(ids('b { id a { s } }')).toEqual([
      { id: 1, a: { s: 'even' } },
      { id: 2, a: { s: 'odd' } },
    ]);
    expect(ids('a { s b { id } } ORDER BY id DESC')).toEqual([
      { s: 'next', b: [] },
      { s: 'odd', b: [{ id: 2 }] },
      { s: 'even', b: [{ id: 1 }] },
    ]);
    // Two groups, not one: the keys differ only past 2^53.
    expect(ids('b { a_id COUNT(*) } ORDER BY a_id DESC')).toHaveLength(2);
    // Deleting one key past 2^53 leaves its double-twin alone.
    const next = nextGeneration(
      generation,
      new Map([['a', [{ op: 'delete', row: ['9007199254740993', 'odd'] }]]]),
      2,
    );
    expect(runQuery(schema, next, 'a { s }').data).toEqual([{ s: 'even' }, { s: 'next' }]);
  });
});

describe('NULL bitmaps', () => {
  const cases: [ColumnType, unknown][] = [
    ['int', 1],
    ['bigint', '1'],
    ['float', 1.5],
    ['decimal', '1.5'],
    ['boolean', false],
    ['string', ''],
    ['json', '{}'],
    ['date', '2024-02-29'],
    ['timestamp', 0],
    ['time', 0],
    ['binary', new Uint8Array([0])],
  ];

  it.each(cases)('%s: no bitmap without NULLs, one bit a NULL row with them', (type, value) => {
    expect(build(type, [value, value]).nulls).toBeNull();
    const values = Array.from({ length: 20 }, (_, i) => (i % 7 === 2 ? null : value));
    const chunk = build(type, values);
    expect(chunk.nulls).not.toBeNull();
    expect(chunk.nulls?.length).toBe(3);
    expect(values.map((_, i) => isNullAt(chunk, i))).toEqual(values.map((v) => v === null));
    expect(values.map((_, i) => readComparable(chunk, i) === null)).toEqual(
      values.map((v) => v === null),
    );
  });

  it('a chunk of NULLs only', () => {
    const chunk = build('string', [null, null, null]);
    expect([0, 1, 2].map((i) => isNullAt(chunk, i))).toEqual([true, true, true]);
  });

  it('an impossible date is stored as NULL', () => {
    const chunk = build('date', ['2023-02-29', '2024-02-29', 'soon']);
    expect(canonical(chunk, 'date')).toEqual([null, '2024-02-29', null]);
  });
});

describe('changes at scale', () => {
  const source = {
    tables: [
      table('t', [column('id', 'int', false), column('s', 'string')]),
      table('logs', [column('msg', 'string'), column('n', 'int')], { primaryKey: [] }),
    ],
  };
  const schema = compileSchema(source, parseSchemaConfig({}));
  const rows = (from: number, count: number) =>
    Array.from({ length: count }, (_, i) => [from + i, `s${from + i}`]);
  const ids = (generation: Generation, text: string) =>
    runQuery(schema, generation, text).data.map((row: { id: number }) => row.id);

  it('merges new rows into a short tail chunk, then starts another', () => {
    const generation = loadGeneration(schema, { t: rows(0, 8000) });
    const inserts: RowChange[] = rows(8000, 500).map((row) => ({ op: 'insert', row }));
    const next = nextGeneration(generation, new Map([['t', inserts]]), 2);
    expect(next.table('t').data.chunks.map((c) => c.length)).toEqual([8192, 308]);
    expect(ids(next, 't (id IN (0, 7999, 8000, 8191, 8192, 8499)) { id }')).toEqual([
      0, 7999, 8000, 8191, 8192, 8499,
    ]);
    expect(runQuery(schema, next, 't { COUNT(*) }').data).toEqual([{ count: 8500 }]);
    expect(ids(next, 't { id } ORDER BY id DESC LIMIT 1')).toEqual([8499]);
  });

  it('rebuilds a table once more than a quarter of its rows are dead', () => {
    const generation = loadGeneration(schema, { t: rows(0, 2000) });
    const deletes: RowChange[] = rows(0, 600).map((row) => ({ op: 'delete', row }));
    const next = nextGeneration(generation, new Map([['t', deletes]]), 2);
    const chunks = next.table('t').data.chunks;
    expect(chunks.map((c) => [c.length, c.deletedCount, c.deleted])).toEqual([[1400, 0, null]]);
    expect(next.rowCounts().t).toBe(1400);
    expect(ids(next, 't (id IN (0, 599, 600, 1999)) { id }')).toEqual([600, 1999]);
    expect(ids(next, 't { id } LIMIT 2')).toEqual([600, 601]);
  });

  it('keeps indexes right when their overlay is folded into a new base', () => {
    let generation = loadGeneration(schema, { t: rows(0, 2000) });
    // 1500 new keys: an overlay past a quarter of the 4096-entry floor is folded.
    const inserts: RowChange[] = rows(2000, 1500).map((row) => ({ op: 'insert', row }));
    generation = nextGeneration(generation, new Map([['t', inserts]]), 2);
    const deletes: RowChange[] = [0, 1999, 2000, 3499].map((id) => ({
      op: 'delete',
      row: [id, null],
    }));
    generation = nextGeneration(generation, new Map([['t', deletes]]), 3);
    expect(ids(generation, 't (id IN (0, 1, 1999, 2000, 2001, 3498, 3499)) { id }')).toEqual([
      1, 2001, 3498,
    ]);
    expect(generation.rowCounts().t).toBe(3496);
  });

  it('truncates, then takes the rows after the truncate', () => {
    const generation = loadGeneration(schema, { t: rows(0, 10) });
    const next = nextGeneration(
      generation,
      new Map<string, RowChange[]>([
        [
          't',
          [
            { op: 'insert', row: [100, 'x'] },
            { op: 'truncate' },
            { op: 'insert', row: [5, 'again'] },
          ],
        ],
      ]),
      2,
    );
    expect(runQuery(schema, next, 't { id s }').data).toEqual([{ id: 5, s: 'again' }]);
  });

  it('changes tables without a primary key by whole-row identity', () => {
    const logs = [
      ['a', 1],
      ['b', 2],
      ['a', 1],
      ['c', null],
    ];
    const generation = loadGeneration(schema, { logs });
    const next = nextGeneration(
      generation,
      new Map<string, RowChange[]>([
        [
          'logs',
          [
            { op: 'delete', row: ['a', 1] },
            { op: 'update', before: ['c', null], after: ['c', 3] },
            { op: 'insert', row: ['d', 4] },
            { op: 'delete', row: ['d', 4] },
            { op: 'delete', row: ['zzz', 9] },
          ],
        ],
      ]),
      2,
    );
    expect(runQuery(schema, next, 'logs { msg n }').data).toEqual([
      { msg: 'b', n: 2 },
      { msg: 'a', n: 1 },
      { msg: 'c', n: 3 },
    ]);
  });
});

describe('updates with partial images', () => {
  it('locates by the new row when before is null, and keeps values the source did not resend', async () => {
    const { shop } = await import('./fixtures.ts');
    const { nextGeneration } = await import('../src/storage/generation-builder.ts');
    const { QueryEngine } = await import('../src/query-engine.ts');
    const { schema, generation } = shop();
    const next = nextGeneration(
      generation,
      new Map([
        [
          'orders',
          [
            {
              op: 'update' as const,
              before: null,
              after: ['10', 1, '99.00', undefined, undefined],
            },
            {
              op: 'update' as const,
              before: ['11', undefined, undefined, undefined, undefined],
              after: ['15', 1, undefined, 'paid', undefined],
            },
          ],
        ],
      ]),
      2,
    );
    const body = JSON.parse(
      new QueryEngine(schema).execute(
        next,
        'orders (id IN (10, 11, 15)) { id total status placed } ORDER BY id',
        { version: 'v', swapCount: 1, ageMs: 0 },
      ),
    );
    expect(body.data).toEqual([
      { id: 10, total: 99, status: 'paid', placed: '2024-01-02' },
      { id: 15, total: 7.25, status: 'paid', placed: '2024-02-03' },
    ]);
  });
});
