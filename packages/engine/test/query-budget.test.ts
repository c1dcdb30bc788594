import { setFlagsFromString } from 'node:v8';
import { runInNewContext } from 'node:vm';
import { describe, expect, it, vi } from 'vitest';
import { EngineError } from '../src/errors.ts';
import {
  QueryBudget,
  QueryCancelledError,
  runCooperatively,
  type Work,
} from '../src/exec/query-budget.ts';
import { QueryEngine } from '../src/query-engine.ts';
import { compileSchema } from '../src/schema/compile-schema.ts';
import { parseSchemaConfig } from '../src/schema/schema-config.ts';
import type { SourceSchema } from '../src/source-schema.ts';
import { column, loadGeneration, TEST_META, table } from './fixtures.ts';

// 200,000 rows make each test a real workload; a busy machine must not turn that into a failure.
vi.setConfig({ testTimeout: 60_000 });

/** `p` 1-n `c`: 1,000 parents, 200,000 children spread over them. */
const source: SourceSchema = {
  tables: [
    table('p', [column('id', 'int', false), column('name', 'string')]),
    table(
      'c',
      [
        column('id', 'int', false),
        column('p_id', 'int'),
        column('n', 'int'),
        column('v', 'string'),
      ],
      {
        foreignKeys: [
          { name: 'fk_p', columns: ['p_id'], referencedTable: 'p', referencedColumns: ['id'] },
        ],
      },
    ),
  ],
};

const PARENTS = 1000;
const CHILDREN = 200_000;
const parentRows = Array.from({ length: PARENTS }, (_, i) => [i + 1, `parent ${i + 1}`]);
const childRows = Array.from({ length: CHILDREN }, (_, i) => {
  const id = i + 1;
  return [id, 1 + (id % PARENTS), id % 97, `v${(id * 7919) % CHILDREN}a`];
});

function setup(query: Record<string, number> = {}) {
  const schema = compileSchema(source, parseSchemaConfig({ query }));
  const generation = loadGeneration(schema, { p: parentRows, c: childRows });
  return { engine: new QueryEngine(schema), generation };
}

// A generous time budget: this machine may be busy, and only the timeout test means to hit it.
const shared = setup({ timeout_ms: 60_000 });

function codeOf(run: () => unknown): string | undefined {
  try {
    run();
  } catch (error) {
    if (error instanceof EngineError) return error.code;
    throw error;
  }
  return undefined;
}

describe('query budgets', () => {
  it('refuses an answer that multiplies through nesting with too_many_rows, before building it', () => {
    const { engine, generation } = shared;
    let message = '';
    try {
      engine.execute(generation, 'p { id c { id p { id c { id } } } } LIMIT 40', TEST_META);
    } catch (error) {
      expect(error).toBeInstanceOf(EngineError);
      expect((error as EngineError).code).toBe('too_many_rows');
      message = (error as Error).message;
    }
    expect(message).toContain('100000 rows');
    expect(message).toContain('query.max_rows');
    expect(message).toContain('AFTER');
  });

  it('counts rows across nesting levels against query.max_rows', () => {
    const { engine, generation } = setup({ max_rows: 500 });
    // 2 parents with 200 children each: 402 rows fit, 3 parents (603) do not.
    const ok = engine.execute(generation, 'p (id <= 2) { id c { id } LIMIT 200 }', TEST_META);
    expect(JSON.parse(ok).data).toHaveLength(2);
    expect(
      codeOf(() => engine.execute(generation, 'p (id <= 3) { id c { id } LIMIT 200 }', TEST_META)),
    ).toBe('too_many_rows');
  });

  it('stops an answer over query.max_response_bytes with response_too_large', () => {
    const { engine, generation } = setup({ max_response_bytes: 4096 });
    expect(codeOf(() => engine.execute(generation, 'c { id v } LIMIT 1000', TEST_META))).toBe(
      'response_too_large',
    );
    expect(
      JSON.parse(engine.execute(generation, 'c { id } LIMIT 10', TEST_META)).data,
    ).toHaveLength(10);
  });

  it('stops a query past its time budget with query_timeout', () => {
    const { engine, generation } = shared;
    const slow = 'c { id } ORDER BY v DESC LIMIT 60000';
    expect(
      codeOf(() => engine.execute(generation, slow, TEST_META, { limits: { timeoutMs: 1 } })),
    ).toBe('query_timeout');
    // The same query under the default budget answers.
    expect(JSON.parse(engine.execute(generation, slow, TEST_META)).data).toHaveLength(60000);
  });

  it('refuses to form more groups than twice query.max_rows', () => {
    const { engine, generation } = setup({ max_rows: 1000 });
    expect(codeOf(() => engine.execute(generation, 'c { v COUNT(*) } LIMIT 5', TEST_META))).toBe(
      'too_many_rows',
    );
    const byN = JSON.parse(engine.execute(generation, 'c { n COUNT(*) } LIMIT 200', TEST_META));
    expect(byN.data).toHaveLength(97);
  });

  it('refuses to keep more distinct values than 10 times query.max_rows, in every path', () => {
    const { engine, generation } = setup({ max_rows: 1000 });
    const refused = (text: string) => codeOf(() => engine.execute(generation, text, TEST_META));
    // 200,000 distinct texts and ids, over a scan, an index's rows and a relation's.
    expect(refused('c { COUNT(DISTINCT v) }')).toBe('too_many_rows');
    expect(refused('c { n COUNT(DISTINCT id) } LIMIT 5')).toBe('too_many_rows');
    expect(refused('p (id = 1) { c { COUNT(DISTINCT id) } }')).toBeUndefined();
    // 97 distinct values of n: within the budget.
    const kept = JSON.parse(engine.execute(generation, 'c { COUNT(DISTINCT n) }', TEST_META));
    expect(kept.data).toEqual([{ count_distinct_n: 97 }]);
  });
});

describe('cooperative answers', () => {
  it('answers like execute, in chunks, and lets other work run while it does', async () => {
    const { engine, generation } = shared;
    const text = 'c (n < 50) { id p_id n v p { name } } ORDER BY v LIMIT 20000';
    let turns = 0;
    let counting = true;
    const count = () => {
      turns++;
      if (counting) setImmediate(count);
    };
    setImmediate(count);
    const answer = await engine.answer(generation, engine.plan(text), TEST_META);
    counting = false;
    expect(turns).toBeGreaterThan(1);
    expect(answer.chunks.length).toBeGreaterThan(1);
    expect(answer.bytes).toBe(answer.chunks.reduce((sum, chunk) => sum + chunk.length, 0));
    const streamed = JSON.parse(answer.text());
    const direct = JSON.parse(engine.execute(generation, text, TEST_META));
    expect(streamed.data).toEqual(direct.data);
    expect(streamed.meta.pagination).toEqual(direct.meta.pagination);
  });

  it('answers a query that ends within its first slice at once, with no promise', () => {
    const { engine, generation } = shared;
    const text = 'c (id = 7) { id v }';
    const answer = engine.answer(generation, engine.plan(text), TEST_META);
    expect(answer).not.toBeInstanceOf(Promise);
    const direct = JSON.parse(engine.execute(generation, text, TEST_META));
    expect(JSON.parse((answer as { text(): string }).text()).data).toEqual(direct.data);
  });

  it('lets the event loop serve timers every few slices, however many queries are paused', async () => {
    const limits = { timeoutMs: 60_000, maxRows: 1, maxResponseBytes: 1 };
    let slices = 0;
    // Ten slices of busy work (each a full slice by the budget's clock), pausing after each.
    function* busy(budget: QueryBudget): Work<string> {
      for (let slice = 0; slice < 10; slice++) {
        while (!budget.tick(1024)) {}
        slices++;
        yield;
      }
      return 'done';
    }
    const runs = Array.from({ length: 16 }, () => {
      const budget = new QueryBudget(limits);
      return runCooperatively(busy(budget), budget, (result) => result);
    });
    const seen: number[] = [];
    const timer = setInterval(() => seen.push(slices), 0);
    expect(await Promise.all(runs)).toEqual(Array(16).fill('done'));
    clearInterval(timer);
    expect(slices).toBe(160);
    // Slices run between two ticks of the timer: a few (one turn), not one of every query.
    const between = seen.slice(1).map((count, i) => count - (seen[i] as number));
    expect(between.length).toBeGreaterThan(10);
    expect(Math.max(...between)).toBeLessThanOrEqual(4);
  });

  it('keeps nothing of a query once it ended, while others still take turns', async () => {
    setFlagsFromString('--expose-gc');
    const gc = runInNewContext('gc') as () => void;
    const limits = { timeoutMs: 60_000, maxRows: 1, maxResponseBytes: 1 };
    function* slices(budget: QueryBudget, count: number, held: object): Work<number> {
      for (let slice = 0; slice < count; slice++) {
        while (!budget.tick(1024)) {}
        yield;
      }
      return Object.keys(held).length;
    }
    const start = (count: number, held: object) => {
      const budget = new QueryBudget(limits);
      return runCooperatively(slices(budget, count, held), budget, (result) => result);
    };
    // A long query keeps the turns going while a short one, holding a big answer, ends.
    const long = start(60, {});
    let big: { answer: Uint8Array } | null = { answer: new Uint8Array(1 << 20) };
    const gone = new WeakRef(big);
    expect(await start(2, big)).toBe(1);
    big = null;
    await new Promise((resolve) => setTimeout(resolve, 10));
    gc();
    gc();
    expect(gone.deref(), 'the ended query is still held').toBeUndefined();
    expect(await long).toBe(0);
  });

  it('is cancelled by its abort signal, already aborted or mid-way', async () => {
    const { engine, generation } = shared;
    const text = 'c { id } ORDER BY v DESC LIMIT 60000';
    const before = new AbortController();
    before.abort();
    expect(() =>
      engine.answer(generation, engine.plan(text), TEST_META, { signal: before.signal }),
    ).toThrow(QueryCancelledError);
    const during = new AbortController();
    const running = engine.answer(generation, engine.plan(text), TEST_META, {
      signal: during.signal,
    });
    // A query that outlives its first slice is a promise: the signal can stop it between turns.
    expect(running).toBeInstanceOf(Promise);
    setImmediate(() => during.abort());
    await expect(running).rejects.toBeInstanceOf(QueryCancelledError);
  });
});

describe('relation filters as semi-joins', () => {
  /** Brute force: the ids of children whose parent has a child with `n` equal to `n`. */
  function expectedIds(maxId: number, n: number): number[] {
    const parentsWithN = new Set<number>();
    for (const row of childRows) if (row[2] === n) parentsWithN.add(row[1] as number);
    return childRows
      .filter((row) => (row[0] as number) < maxId && parentsWithN.has(row[1] as number))
      .map((row) => row[0] as number);
  }

  it('follow a chain through both directions and agree with brute force', () => {
    const { engine, generation } = shared;
    const run = (text: string) =>
      JSON.parse(engine.execute(generation, text, TEST_META)).data.map(
        (row: { id: number }) => row.id,
      );
    expect(run('c (id < 300 AND p.c.n = 5) { id } LIMIT 1000')).toEqual(expectedIds(300, 5));
    expect(run('c (id < 2 AND p.c.p.c.p.c.n = -1) { id }')).toEqual([]);
    expect(run('c (id < 5 AND p.c.p.c.p.c.n = 3) { id }')).toEqual([1, 2, 3, 4]);
    expect(run("p (c.v = 'nope' OR id = 7) { id }")).toEqual([7]);
  });
});
