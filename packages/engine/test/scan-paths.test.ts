/**
 * The scan fast paths over many small chunks: zone maps deciding a comparison for a whole
 * chunk, the fused filter + top-K of a single numeric ORDER BY, and GROUP BY column at a time.
 * Each answer is checked against the rows themselves (or against a query the fast paths do
 * not take), with NULLs, deleted rows, NaN, infinities, values kept as exact text, and a
 * generation after changes.
 */

import { describe, expect, it } from 'vitest';
import type { PlanFilter } from '../src/exec/plan.ts';
import { ALWAYS, NEVER, RowFilter } from '../src/exec/predicate.ts';
import { QueryEngine } from '../src/query-engine.ts';
import { compileSchema } from '../src/schema/compile-schema.ts';
import type { CompiledSchema } from '../src/schema/compiled-schema.ts';
import { parseSchemaConfig } from '../src/schema/schema-config.ts';
import type { RowChange } from '../src/storage/apply-changes.ts';
import type { ColumnChunk } from '../src/storage/column-chunk.ts';
import { ExactTexts } from '../src/storage/exact-texts.ts';
import type { Generation } from '../src/storage/generation.ts';
import { nextGeneration } from '../src/storage/generation-builder.ts';
import { zoneMap } from '../src/storage/zone-map.ts';
import { buildGeneration, column, runQuery, table } from './fixtures.ts';

type Row = [number, number | null, number | null, string | null, string];

const SOURCE = {
  tables: [
    table('t', [
      column('id', 'int', false),
      column('n', 'int'),
      column('v', 'float'),
      column('s', 'string'),
      column('big', 'bigint', false),
    ]),
  ],
};
const CHUNK_ROWS = 4;

function schemaOf(): CompiledSchema {
  return compileSchema(SOURCE, parseSchemaConfig({}));
}

/**
 * 40 rows in chunks of 4: `n` rises chunk by chunk (so zone maps separate chunks), `v` repeats
 * values (ties), `s` is one value in some chunks and mixed in others, `big` past 2^53 in some.
 */
function baseRows(): Row[] {
  const rows: Row[] = [];
  for (let i = 0; i < 40; i++) {
    const chunk = Math.floor(i / CHUNK_ROWS);
    const n = i % 7 === 6 ? null : chunk * 10 + (i % CHUNK_ROWS);
    const v = i % 5 === 4 ? null : ((i * 37) % 11) / 2;
    const s =
      i % 9 === 8 ? null : chunk % 3 === 0 ? 'x' : chunk % 3 === 1 ? (i % 2 ? 'y' : 'z') : 'x';
    const big = i % 6 === 0 ? (9007199254740993n + BigInt(i)).toString() : String(i * 1000);
    rows.push([i + 1, n, v, s, big]);
  }
  return rows;
}

/** The rows after deleting some, updating some and inserting a few. */
function changedRows(rows: Row[]): { changes: RowChange[]; after: Row[] } {
  const changes: RowChange[] = [];
  const after = new Map(rows.map((row) => [row[0], row]));
  for (const row of rows) {
    if (row[0] % 4 === 1) {
      changes.push({ op: 'delete', row });
      after.delete(row[0]);
    } else if (row[0] % 10 === 3) {
      const changed: Row = [row[0], 1000 + row[0], 2.5, 'x', row[4]];
      changes.push({ op: 'update', before: row, after: changed });
      after.set(row[0], changed);
    }
  }
  for (const id of [41, 42, 43]) {
    const inserted: Row = [id, id === 42 ? null : -id, 2.5, 'w', String(id)];
    changes.push({ op: 'insert', row: inserted });
    after.set(id, inserted);
  }
  return { changes, after: [...after.values()] };
}

interface Case {
  readonly name: string;
  readonly generation: Generation;
  readonly rows: readonly Row[];
}

function cases(): Case[] {
  const schema = schemaOf();
  const rows = baseRows();
  const generation = buildGeneration(schema, { t: rows }, CHUNK_ROWS);
  const { changes, after } = changedRows(rows);
  const changed = nextGeneration(generation, new Map([['t', changes]]), 2);
  return [
    { name: 'as loaded', generation, rows },
    { name: 'after deletes, updates and inserts', generation: changed, rows: after },
  ];
}

function ids(answer: { data: { id: number }[] }): number[] {
  return answer.data.map((row) => row.id).sort((a, b) => a - b);
}

function idsWhere(rows: readonly Row[], passes: (row: Row) => boolean): number[] {
  return rows
    .filter(passes)
    .map((row) => row[0])
    .sort((a, b) => a - b);
}

describe('zone maps', () => {
  const chunkOf = (values: Partial<ColumnChunk>) => values as ColumnChunk;

  it('bound the non-NULL values of a numeric chunk, and are absent where they could mislead', () => {
    const nulls = new Uint8Array([0b0000_0010]);
    expect(zoneMap(chunkOf({ kind: 'int32', values: new Int32Array([5, -9, 3]), nulls }))).toEqual({
      min: 3,
      max: 5,
    });
    expect(
      zoneMap(
        chunkOf({ kind: 'float64', values: new Float64Array([0.5, 2]), nulls: null, exact: null }),
      ),
    ).toEqual({ min: 0.5, max: 2 });
    // Only NULLs: an empty range.
    expect(
      zoneMap(chunkOf({ kind: 'int32', values: new Int32Array([0]), nulls: new Uint8Array([1]) })),
    ).toEqual({ min: Number.POSITIVE_INFINITY, max: Number.NEGATIVE_INFINITY });
    // A NaN compares like no number; exact text is not what the doubles say.
    expect(
      zoneMap(
        chunkOf({
          kind: 'float64',
          values: new Float64Array([1, Number.NaN]),
          nulls: null,
          exact: null,
        }),
      ),
    ).toBeNull();
    expect(
      zoneMap(
        chunkOf({
          kind: 'float64',
          values: new Float64Array([9007199254740992]),
          nulls: null,
          exact: ExactTexts.of(new Map([[0, '9007199254740993']])),
        }),
      ),
    ).toBeNull();
    expect(
      zoneMap(chunkOf({ kind: 'dict', codes: new Uint16Array(1), dictionary: ['a'], nulls: null })),
    ).toBeNull();
  });

  it('decide a comparison for a whole chunk where the range allows', () => {
    const schema = schemaOf();
    const generation = buildGeneration(schema, { t: baseRows() }, CHUNK_ROWS);
    const snapshot = generation.table('t');
    const n = schema.tablesByName.get('t')!.columns[1]!;
    const filter = (operator: '>' | '=' | '!=', value: number): PlanFilter => ({
      kind: 'compare',
      column: n,
      operator,
      value,
    });
    const tests = (plan: PlanFilter) => {
      const rowFilter = new RowFilter(snapshot, plan, new Map());
      return snapshot.data.chunks.map((_, c) => {
        const test = rowFilter.forChunk(c);
        return test === NEVER ? 'never' : test === ALWAYS ? 'always' : 'rows';
      });
    };
    // Chunk c holds n in c*10 .. c*10+3; chunks 1, 3, 5, 6, 8 hold a NULL (rows 7, 14, 21, 28, 35).
    expect(tests(filter('>', 45))).toEqual([
      'never',
      'never',
      'never',
      'never',
      'never',
      'rows',
      'rows',
      'always',
      'rows',
      'always',
    ]);
    expect(tests(filter('=', 31))[3]).toBe('rows');
    expect(tests(filter('=', 31)).filter((test) => test === 'never')).toHaveLength(9);
    // != passes every value of most chunks, but never a NULL.
    expect(tests(filter('!=', 31))).toEqual([
      'always',
      'rows',
      'always',
      'rows',
      'always',
      'rows',
      'rows',
      'always',
      'rows',
      'always',
    ]);
  });

  for (const { name, generation, rows } of cases()) {
    it(`give the rows' own answers, ${name}`, () => {
      const schema = generation.schema;
      const run = (filter: string) => ids(runQuery(schema, generation, `t (${filter}) { id }`));
      const n = (row: Row) => row[1];
      expect(run('n > 45')).toEqual(idsWhere(rows, (row) => n(row) !== null && n(row)! > 45));
      expect(run('n >= 30')).toEqual(idsWhere(rows, (row) => n(row) !== null && n(row)! >= 30));
      expect(run('n < 12')).toEqual(idsWhere(rows, (row) => n(row) !== null && n(row)! < 12));
      expect(run('n <= 12')).toEqual(idsWhere(rows, (row) => n(row) !== null && n(row)! <= 12));
      expect(run('n = 31')).toEqual(idsWhere(rows, (row) => n(row) === 31));
      expect(run('n != 31')).toEqual(idsWhere(rows, (row) => n(row) !== null && n(row) !== 31));
      expect(run('n BETWEEN 12 AND 41')).toEqual(
        idsWhere(rows, (row) => n(row) !== null && n(row)! >= 12 && n(row)! <= 41),
      );
      expect(run('n > 45 OR n < 3')).toEqual(
        idsWhere(rows, (row) => n(row) !== null && (n(row)! > 45 || n(row)! < 3)),
      );
      expect(run('n > 45 AND v >= 2')).toEqual(
        idsWhere(rows, (row) => n(row) !== null && n(row)! > 45 && row[2] !== null && row[2] >= 2),
      );
      expect(run("s = 'x'")).toEqual(idsWhere(rows, (row) => row[3] === 'x'));
      expect(run("s != 'x'")).toEqual(idsWhere(rows, (row) => row[3] !== null && row[3] !== 'x'));
      expect(run("s = 'x' AND n >= 60")).toEqual(
        idsWhere(rows, (row) => row[3] === 'x' && n(row) !== null && n(row)! >= 60),
      );
      // BIGINT past 2^53 kept as exact text: compared exactly, never by a zone map.
      expect(run('big > 9007199254741000')).toEqual(
        idsWhere(rows, (row) => BigInt(row[4]) > 9007199254741000n),
      );
      expect(run('big = 9007199254740999')).toEqual(
        idsWhere(rows, (row) => row[4] === '9007199254740999'),
      );
    });
  }
});

describe('a single numeric ORDER BY over a scan', () => {
  for (const { name, generation } of cases()) {
    it(`pages as the general sort does, ${name}`, () => {
      const schema = generation.schema;
      // With `id` as a second key the general sort runs; ties fall back to the key anyway.
      for (const [filter, sort] of [
        ['', 'v DESC'],
        ['', 'v'],
        ['', 'n DESC'],
        ['', 'n'],
        ["(s = 'x')", 'v DESC'],
        ['(n > 25)', 'v'],
        ['(n > 45 OR n < 3)', 'n DESC'],
        ['(v = 2.5)', 'n'],
      ]) {
        for (const window of ['LIMIT 3', 'LIMIT 5 OFFSET 2', 'LIMIT 1', 'LIMIT 100', 'OFFSET 38']) {
          const fused = runQuery(
            schema,
            generation,
            `t ${filter} { id n v } ORDER BY ${sort} ${window}`,
          );
          const general = runQuery(
            schema,
            generation,
            `t ${filter} { id n v } ORDER BY ${sort}, id ${window}`,
          );
          expect(fused.data, `${filter} ${sort} ${window}`).toEqual(general.data);
          expect(fused.meta.pagination).toEqual(general.meta.pagination);
        }
      }
    });
  }

  it('takes the general path for NaN, infinities and exact values, with the same answer', () => {
    const schema = schemaOf();
    const rows: Row[] = baseRows().map((row, i) => {
      if (i === 13) return [row[0], row[1], Number.NaN, row[3], row[4]];
      if (i === 22) return [row[0], row[1], Number.POSITIVE_INFINITY, row[3], row[4]];
      if (i === 30) return [row[0], row[1], Number.NEGATIVE_INFINITY, row[3], row[4]];
      return row;
    });
    const generation = buildGeneration(schema, { t: rows }, CHUNK_ROWS);
    for (const sort of ['v DESC', 'v', 'big DESC', 'big']) {
      const fused = runQuery(schema, generation, `t { id v big } ORDER BY ${sort} LIMIT 7`);
      const general = runQuery(schema, generation, `t { id v big } ORDER BY ${sort}, id LIMIT 7`);
      expect(fused.data, sort).toEqual(general.data);
    }
    const descending = runQuery(schema, generation, 't { id } ORDER BY big DESC LIMIT 2');
    expect(descending.data).toEqual([{ id: 37 }, { id: 31 }]);
  });

  it('keeps the rows budget and counts every match', () => {
    const schema = schemaOf();
    const generation = buildGeneration(schema, { t: baseRows() }, CHUNK_ROWS);
    const answer = runQuery(schema, generation, "t (s = 'x') { id } ORDER BY n DESC LIMIT 2");
    const matching = baseRows().filter((row) => row[3] === 'x');
    expect(answer.meta.pagination).toMatchObject({
      count: 2,
      total_matched: matching.length,
      has_more: true,
    });
    const engine = new QueryEngine(schema);
    expect(() =>
      engine.execute(generation, 't { id } ORDER BY n LIMIT 30', TEST_META_SMALL, {
        limits: { maxRows: 10 },
      }),
    ).toThrow(/more than 10 rows/);
    // A page within the budget once the matches are counted is not refused.
    expect(
      JSON.parse(
        engine.execute(generation, 't (n > 85) { id } ORDER BY n LIMIT 30', TEST_META_SMALL, {
          limits: { maxRows: 10 },
        }),
      ).data,
    ).toHaveLength(4);
  });
});

const TEST_META_SMALL = { version: 'test', swapCount: 0, ageMs: 0 };

describe('GROUP BY over a scan, column at a time', () => {
  for (const { name, generation, rows } of cases()) {
    it(`counts and sums as the rows do, ${name}`, () => {
      const schema = generation.schema;
      for (const filter of ['', '(n > 25)', "(s != 'y')", '(v = 2.5)']) {
        const query = (selection: string) =>
          runQuery(schema, generation, `t ${filter} { s ${selection} }`).data as Record<
            string,
            unknown
          >[];
        const main = query('COUNT(*) SUM(n) AVG(n)');
        const countN = query('COUNT(n)');
        const countV = query('COUNT(v)');
        const passes = (row: Row): boolean => {
          if (filter === '(n > 25)') return row[1] !== null && row[1] > 25;
          if (filter === "(s != 'y')") return row[3] !== null && row[3] !== 'y';
          if (filter === '(v = 2.5)') return row[2] === 2.5;
          return true;
        };
        const expected = new Map<string | null, { s: string | null; rows: Row[] }>();
        // Groups come in the order of their first rows (row order: chunk by chunk).
        const ordered = [...rows]
          .map((row, i) => ({ row, i }))
          .filter(({ row }) => passes(row))
          .map(({ row }) => row);
        for (const row of ordered) {
          const group = expected.get(row[3]) ?? { s: row[3], rows: [] };
          group.rows.push(row);
          expected.set(row[3], group);
        }
        const want = [...expected.values()].map(({ s, rows: groupRows }) => {
          const ns = groupRows.map((row) => row[1]).filter((value) => value !== null);
          const sum = ns.reduce((total, value) => total + value, 0);
          return {
            s,
            count: groupRows.length,
            count_n: ns.length,
            count_v: groupRows.filter((row) => row[2] !== null).length,
            sum_n: ns.length === 0 ? null : sum,
            avg_n: ns.length === 0 ? null : sum / ns.length,
          };
        });
        const got = main.map((group, g) => ({
          s: group.s,
          count: group.count,
          count_n: countN[g]?.count,
          count_v: countV[g]?.count,
          sum_n: group.sum_n,
          avg_n: group.avg_n,
        }));
        const bySet = (list: { s: unknown }[]) =>
          [...list].sort((a, b) => String(a.s).localeCompare(String(b.s)));
        expect(bySet(got), filter).toEqual(bySet(want));
        if (name === 'as loaded')
          expect(got.map((group: { s: unknown }) => group.s)).toEqual(want.map((g) => g.s));
      }
    });
  }

  it('sums large integers exactly across chunks, groups in first-seen order', () => {
    const source = {
      tables: [table('w', [column('id', 'int', false), column('k', 'string'), column('q', 'int')])],
    };
    const schema = compileSchema(source, parseSchemaConfig({}));
    const rows = Array.from({ length: 4200 }, (_, i) => [
      i + 1,
      i % 2 ? 'a' : 'b',
      2 ** 31 - 1 - (i % 3),
    ]);
    const generation = buildGeneration(schema, { w: rows }, 1024);
    const answer = runQuery(schema, generation, 'w { k COUNT(*) SUM(q) }');
    const expected = (key: string) =>
      rows
        .filter((row) => row[1] === key)
        .reduce((total, row) => total + BigInt(row[2] as number), 0n)
        .toString();
    expect(answer.data).toEqual([
      { k: 'b', count: 2100, sum_q: Number(expected('b')) },
      { k: 'a', count: 2100, sum_q: Number(expected('a')) },
    ]);
    expect(JSON.stringify(answer.data)).toContain(expected('a'));
    const total = BigInt(expected('a')) + BigInt(expected('b'));
    expect(runQuery(schema, generation, 'w { COUNT(*) SUM(q) }').data).toEqual([
      { count: 4200, sum_q: Number(total) },
    ]);
    expect(runQuery(schema, generation, "w (k = 'a') { COUNT(*) AVG(q) }").data).toEqual([
      { count: 2100, avg_q: Number(expected('a')) / 2100 },
    ]);
  });
});
