/** Keyset paging with AFTER: primary-key order, each row exactly once across changing data. */
import fc from 'fast-check';
import { describe, expect, it } from 'vitest';
import { EngineError } from '../src/errors.ts';
import { QueryEngine } from '../src/query-engine.ts';
import { compileSchema } from '../src/schema/compile-schema.ts';
import type { CompiledSchema } from '../src/schema/compiled-schema.ts';
import { parseSchemaConfig } from '../src/schema/schema-config.ts';
import type { ColumnType } from '../src/source-schema.ts';
import type { RowChange } from '../src/storage/apply-changes.ts';
import type { Generation } from '../src/storage/generation.ts';
import { nextGeneration } from '../src/storage/generation-builder.ts';
import { buildGeneration, column, runQuery, TEST_META, table } from './fixtures.ts';

function schemaWithKey(type: ColumnType): CompiledSchema {
  const source = { tables: [table('t', [column('id', type, false), column('tag', 'string')])] };
  return compileSchema(source, parseSchemaConfig({}));
}

interface Page {
  readonly ids: unknown[];
  readonly cursor: string | undefined;
  readonly pagination: Record<string, unknown>;
}

function page(
  schema: CompiledSchema,
  generation: Generation,
  cursor: string,
  limit: number,
  filter = '',
): Page {
  const result = runQuery(schema, generation, `t${filter} { id } LIMIT ${limit} AFTER '${cursor}'`);
  return {
    ids: result.data.map((row: { id: unknown }) => row.id),
    cursor: result.meta.pagination.next_cursor,
    pagination: result.meta.pagination,
  };
}

/** Every page from the first, without changes. */
function walk(
  schema: CompiledSchema,
  generation: Generation,
  limit: number,
  filter = '',
): unknown[][] {
  const pages: unknown[][] = [];
  let cursor = '';
  for (let i = 0; i < 1000; i++) {
    const next = page(schema, generation, cursor, limit, filter);
    pages.push(next.ids);
    if (next.cursor === undefined) return pages;
    cursor = next.cursor;
  }
  throw new Error('paging did not end');
}

describe('AFTER over an int key', () => {
  const schema = schemaWithKey('int');
  const ids = [5, -3, 9, 1, 12, 0, 7, -20, 4];
  const generation = buildGeneration(
    schema,
    { t: ids.map((id) => [id, id % 2 ? 'odd' : 'even']) },
    4,
  );

  it('walks in key order, whatever the storage order', () => {
    expect(walk(schema, generation, 4)).toEqual([[-20, -3, 0, 1], [4, 5, 7, 9], [12]]);
  });

  it('reports the page, the total and the cursor until the end', () => {
    const first = page(schema, generation, '', 4);
    expect(first.pagination).toEqual({
      count: 4,
      total_matched: 9,
      has_more: true,
      limit: 4,
      next_cursor: first.cursor,
    });
    expect(typeof first.cursor).toBe('string');
    const last = page(
      schema,
      generation,
      page(schema, generation, first.cursor ?? '', 4).cursor ?? '',
      4,
    );
    expect(last.pagination).toEqual({ count: 1, total_matched: 9, has_more: false, limit: 4 });
  });

  it('ends without a cursor when the last page is exactly full', () => {
    expect(walk(schema, generation, 3)).toEqual([
      [-20, -3, 0],
      [1, 4, 5],
      [7, 9, 12],
    ]);
    expect(walk(schema, generation, 9)).toEqual([[-20, -3, 0, 1, 4, 5, 7, 9, 12]]);
  });

  it('defaults to LIMIT 1000', () => {
    const result = runQuery(schema, generation, "t { id } AFTER ''");
    expect(result.meta.pagination.limit).toBe(1000);
    expect(result.meta.pagination.next_cursor).toBeUndefined();
    expect(result.data).toHaveLength(9);
  });

  it('pages over the rows that match the filter', () => {
    expect(walk(schema, generation, 2, " (tag = 'odd')")).toEqual([[-3, 1], [5, 7], [9]]);
    const first = page(schema, generation, '', 2, " (tag = 'odd')");
    expect(first.pagination.total_matched).toBe(5);
  });

  it('an empty table gives one empty page', () => {
    const empty = buildGeneration(schema, { t: [] }, 4);
    expect(page(schema, empty, '', 5).pagination).toEqual({
      count: 0,
      total_matched: 0,
      has_more: false,
      limit: 5,
    });
  });
});

describe('AFTER over a text key', () => {
  const schema = schemaWithKey('string');
  const ids = ['é', 'a', 'B', '😀', '\uFFFF', 'ab', '', 'A', 'e\u0301'];
  const generation = buildGeneration(schema, { t: ids.map((id) => [id, null]) }, 4);

  it('walks in code point order', () => {
    // '' < 'A' < 'B' < 'a' < 'ab' < 'e\u0301' < 'é' < U+FFFF < '😀' (astral last).
    expect(walk(schema, generation, 4)).toEqual([
      ['', 'A', 'B', 'a'],
      ['ab', 'e\u0301', 'é', '\uFFFF'],
      ['😀'],
    ]);
  });
});

describe('AFTER over a BIGINT key', () => {
  const schema = schemaWithKey('bigint');
  const ids = [
    '9007199254740993',
    '9007199254740992',
    '-9223372036854775808',
    '9223372036854775807',
    '9007199254740994',
  ];
  const generation = buildGeneration(schema, { t: ids.map((id) => [id, null]) }, 2);

  it('walks keys past 2^53 without skipping any', () => {
    // JSON.parse would round these ids: read them from the response text.
    const engine = new QueryEngine(schema);
    const pages: string[][] = [];
    let cursor = '';
    for (;;) {
      const text = engine.execute(generation, `t { id } LIMIT 2 AFTER '${cursor}'`, TEST_META);
      pages.push([...text.matchAll(/"id":(-?\d+)/g)].map((m) => m[1] as string));
      const next = JSON.parse(text).meta.pagination.next_cursor;
      if (next === undefined) break;
      cursor = next;
    }
    expect(pages).toEqual([
      ['-9223372036854775808', '9007199254740992'],
      ['9007199254740993', '9007199254740994'],
      ['9223372036854775807'],
    ]);
  });
});

describe('AFTER while the data changes between pages', () => {
  it('int keys: inserted rows ahead appear, deleted rows ahead do not, nothing repeats', () => {
    const schema = schemaWithKey('int');
    let generation = buildGeneration(
      schema,
      { t: [10, 20, 30, 40, 50].map((id) => [id, null]) },
      2,
    );
    const first = page(schema, generation, '', 2);
    expect(first.ids).toEqual([10, 20]);
    // Behind the cursor: 5 inserted, 10 deleted. Ahead: 35 inserted, 40 deleted, 20 re-keyed to 45.
    const changes: RowChange[] = [
      { op: 'insert', row: [5, null] },
      { op: 'delete', row: [10, null] },
      { op: 'insert', row: [35, null] },
      { op: 'delete', row: [40, null] },
      { op: 'update', before: [20, null], after: [45, 'moved'] },
    ];
    generation = nextGeneration(generation, new Map([['t', changes]]), 2);
    const second = page(schema, generation, first.cursor ?? '', 2);
    expect(second.ids).toEqual([30, 35]);
    generation = nextGeneration(
      generation,
      new Map([['t', [{ op: 'delete', row: [45, 'moved'] }]]]),
      3,
    );
    const third = page(schema, generation, second.cursor ?? '', 2);
    expect(third.ids).toEqual([50]);
    expect(third.cursor).toBeUndefined();
  });

  it('text keys: the cursor row itself may be deleted', () => {
    const schema = schemaWithKey('string');
    let generation = buildGeneration(
      schema,
      { t: ['b', 'd', 'f', 'h'].map((id) => [id, null]) },
      3,
    );
    const first = page(schema, generation, '', 2);
    expect(first.ids).toEqual(['b', 'd']);
    const changes: RowChange[] = [
      { op: 'delete', row: ['d', null] },
      { op: 'insert', row: ['c', null] },
      { op: 'insert', row: ['e', null] },
      { op: 'insert', row: ['D', null] },
    ];
    generation = nextGeneration(generation, new Map([['t', changes]]), 2);
    expect(walkFrom(schema, generation, first.cursor ?? '', 2)).toEqual([['e', 'f'], ['h']]);
  });

  for (const keyType of ['int', 'string'] as const) {
    it(`${keyType} keys: random walks see every surviving row exactly once, in order`, () => {
      const keyArb: fc.Arbitrary<number | string> =
        keyType === 'int'
          ? fc.integer({ min: -50, max: 50 })
          : fc.string({ unit: fc.constantFrom('a', 'B', 'é', '😀', '\uFFFF', 'z'), maxLength: 3 });
      fc.assert(
        fc.property(
          fc.uniqueArray(keyArb, { maxLength: 25 }),
          fc.integer({ min: 1, max: 6 }),
          fc.array(
            fc.tuple(fc.array(keyArb, { maxLength: 4 }), fc.array(fc.nat(), { maxLength: 3 })),
            {
              maxLength: 12,
            },
          ),
          fc.constantFrom(2, 5, 65_536),
          (initial, limit, between, chunkRows) => {
            const schema = schemaWithKey(keyType);
            const live = new Set<number | string>(initial);
            let generation = buildGeneration(
              schema,
              { t: initial.map((id) => [id, null]) },
              chunkRows,
            );
            /** Rows live for the whole walk, which it must see. */
            const always = new Set(live);
            const seen: (number | string)[] = [];
            let cursor = '';
            for (let step = 0; ; step++) {
              const next = page(schema, generation, cursor, limit);
              for (const id of next.ids) expect(live.has(id as number | string)).toBe(true);
              seen.push(...(next.ids as (number | string)[]));
              if (next.cursor === undefined) break;
              cursor = next.cursor;
              const batch = between[step];
              if (!batch) continue;
              const [inserts, deletes] = batch;
              const changes: RowChange[] = [];
              const current = [...live];
              for (const pick of deletes) {
                const id = current[pick % current.length];
                if (id === undefined || !live.has(id)) continue;
                live.delete(id);
                always.delete(id);
                changes.push({ op: 'delete', row: [id, null] });
              }
              for (const id of inserts) {
                if (live.has(id)) continue;
                live.add(id);
                changes.push({ op: 'insert', row: [id, null] });
              }
              generation = nextGeneration(generation, new Map([['t', changes]]), generation.id + 1);
            }
            expect(new Set(seen).size).toBe(seen.length);
            const sorted = [...seen].sort((a, b) => compareKeys(a, b));
            expect(seen).toEqual(sorted);
            for (const id of always) expect(seen).toContain(id);
          },
        ),
        { numRuns: 60 },
      );
    });
  }
});

describe('AFTER errors', () => {
  const schema = schemaWithKey('int');
  const generation = buildGeneration(schema, { t: [[1, null]] }, 4);

  function errorOf(text: string): EngineError {
    try {
      runQuery(schema, generation, text);
    } catch (error) {
      if (error instanceof EngineError) return error;
      throw error;
    }
    throw new Error(`expected "${text}" to fail`);
  }

  it('rejects a malformed cursor, or one for another key type', () => {
    const texts = schemaWithKey('string');
    const textCursor = page(
      texts,
      buildGeneration(
        texts,
        {
          t: [
            ['a', null],
            ['b', null],
          ],
        },
        4,
      ),
      '',
      1,
    ).cursor;
    expect(textCursor).toBeDefined();
    for (const cursor of ['garbage!', 'eyJ', textCursor ?? '']) {
      const error = errorOf(`t { id } AFTER '${cursor}'`);
      expect(error.code).toBe('executor_error');
      expect(error.status).toBe(400);
      expect(error.message).toMatch(/^Malformed AFTER cursor/);
    }
  });

  it('rejects ORDER BY and aggregates', () => {
    expect(errorOf("t { id } ORDER BY id AFTER ''").message).toBe(
      'AFTER pages in primary-key order and cannot be combined with ORDER BY.',
    );
    expect(errorOf("t { COUNT(*) } AFTER ''").message).toBe(
      'AFTER cannot be combined with aggregates.',
    );
  });
});

function walkFrom(
  schema: CompiledSchema,
  generation: Generation,
  from: string,
  limit: number,
): unknown[][] {
  const pages: unknown[][] = [];
  let cursor = from;
  for (;;) {
    const next = page(schema, generation, cursor, limit);
    pages.push(next.ids);
    if (next.cursor === undefined) return pages;
    cursor = next.cursor;
  }
}

function compareKeys(a: number | string, b: number | string): number {
  if (typeof a === 'number' && typeof b === 'number') return a - b;
  const x = Array.from(String(a), (c) => c.codePointAt(0) as number);
  const y = Array.from(String(b), (c) => c.codePointAt(0) as number);
  for (let i = 0; i < Math.min(x.length, y.length); i++)
    if (x[i] !== y[i]) return (x[i] as number) - (y[i] as number);
  return x.length - y.length;
}
