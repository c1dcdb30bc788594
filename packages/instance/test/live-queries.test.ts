import {
  compileSchema,
  EngineError,
  type Generation,
  GenerationBuilder,
  nextGeneration,
  parseSchemaConfig,
  QueryEngine,
  type SourceSchema,
} from '@replix/engine';
import { describe, expect, it } from 'vitest';
import { LIVE_QUERY_LIMITS, LiveQueries, type LiveSink } from '../src/live-queries.ts';

const SOURCE: SourceSchema = {
  tables: ['items', 'other'].map((name) => ({
    name,
    columns: [
      { name: 'id', type: 'int', nullable: false, sourceType: 'int' },
      { name: 'note', type: 'string', nullable: true, sourceType: 'text' },
    ],
    primaryKey: ['id'],
    uniqueKeys: [],
    foreignKeys: [],
    estimatedRows: null,
  })),
};
const schema = compileSchema(SOURCE, parseSchemaConfig({}));
const engine = new QueryEngine(schema);

/** An instance's served state over generations the test swaps in, and a counting runner. */
function instance(rows: unknown[][]) {
  const builder = new GenerationBuilder(schema);
  builder.loader('items').appendRows(rows);
  let generation: Generation = builder.finish(1);
  let runs = 0;
  let failing: Error | null = null;
  const live = new LiveQueries(
    () => ({ generation, swapCount: generation.id - 1, ageMs: 0 }),
    async (plan, served) => {
      runs += 1;
      if (failing) throw failing;
      return engine.answer(served.generation, plan, { version: 'v', swapCount: 0, ageMs: 0 });
    },
    'boot',
  );
  return {
    live,
    runs: () => runs,
    failWith(error: Error | null) {
      failing = error;
    },
    change(table: string, row: unknown[]) {
      generation = nextGeneration(
        generation,
        new Map([[table, [{ op: 'insert' as const, row }]]]),
        generation.id + 1,
      );
    },
  };
}

/** A sink that records what it is sent, as if its client read nothing (`unread`) or all. */
function sink(unread = false) {
  const chunks: string[] = [];
  let buffered = 0;
  let ended = false;
  const target: LiveSink = {
    write(chunk) {
      chunks.push(chunk.toString());
      buffered = unread ? buffered + chunk.length : chunk.length;
      return buffered;
    },
    end() {
      ended = true;
    },
    authorized: () => true,
  };
  return { target, chunks, ended: () => ended };
}

const subscribe = (live: LiveQueries, text: string, to: LiveSink) =>
  live.subscribe(text, engine.plan(text), 'key', undefined, to);

describe('live queries of one thread', () => {
  it('evaluates again only when a table the query reads changed', async () => {
    const { live, runs, change } = instance([[1, 'a']]);
    const a = sink();
    const end = await subscribe(live, 'items { id note }', a.target);
    expect(runs()).toBe(1);
    change('other', [1, 'x']);
    // Give the thread's look at the generation (every 10 ms) time to see that swap alone.
    await new Promise((resolve) => setTimeout(resolve, 50));
    change('items', [2, 'b']);
    await expect.poll(() => a.chunks.length).toBe(2);
    expect(runs()).toBe(2);
    expect(a.chunks[1]).toMatch(
      /^id: 3\.boot\ndata: \{"data":\[\{"id":1,"note":"a"\},\{"id":2,"note":"b"\}\]/,
    );
    end();
    expect(live.subscriptions).toBe(0);
  });

  it('fails the request when the first evaluation fails, and ends the streams when a later one does', async () => {
    const { live, change, failWith } = instance([[1, 'a']]);
    failWith(new EngineError('too_many_rows', 'Too many rows.'));
    await expect(subscribe(live, 'items { id }', sink().target)).rejects.toMatchObject({
      code: 'too_many_rows',
    });
    expect(live.subscriptions).toBe(0);
    failWith(null);
    const open = sink();
    await subscribe(live, 'items { id }', open.target);
    failWith(new EngineError('too_many_rows', 'Too many rows.'));
    change('items', [2, 'b']);
    await expect.poll(() => open.ended()).toBe(true);
    expect(open.chunks.at(-1)).toBe(
      'event: query-error\ndata: {"error":{"code":"too_many_rows","message":"Too many rows."}}\n\n',
    );
    expect(live.subscriptions).toBe(0);
  });

  it('gives the place back of a client that leaves while its first result is evaluated', async () => {
    let release: () => void = () => {};
    const held = new Promise<void>((resolve) => {
      release = resolve;
    });
    const builder = new GenerationBuilder(schema);
    const generation = builder.finish(1);
    const live = new LiveQueries(
      () => ({ generation, swapCount: 0, ageMs: 0 }),
      async (plan, served) => {
        await held;
        return engine.answer(served.generation, plan, { version: 'v', swapCount: 0, ageMs: 0 });
      },
      'boot',
    );
    const gone = new AbortController();
    const text = 'items { id }';
    const subscribing = live.subscribe(
      text,
      engine.plan(text),
      'key',
      undefined,
      sink().target,
      gone.signal,
    );
    expect(live.subscriptions).toBe(1);
    gone.abort();
    release();
    await subscribing;
    expect(live.subscriptions).toBe(0);
  });

  it('keeps a small result for subscribers that join, and evaluates a big one again for each', async () => {
    const big = 'x'.repeat(LIVE_QUERY_LIMITS.maxKeptEventBytes);
    const { live, runs } = instance([[1, big]]);
    const first = sink();
    await subscribe(live, 'items { note }', first.target);
    const second = sink();
    await subscribe(live, 'items { note }', second.target);
    expect(runs()).toBe(2);
    const untimed = (event = '') => event.replace(/"timing_ms":[\d.]+/, '');
    expect(untimed(second.chunks[0])).toBe(untimed(first.chunks[0]));
    expect(second.chunks[0]?.length).toBeGreaterThan(LIVE_QUERY_LIMITS.maxKeptEventBytes);
    await subscribe(live, 'items { id }', sink().target);
    await subscribe(live, 'items { id }', sink().target);
    expect(runs()).toBe(3);
    live.closeAll();
  });

  it('drops a subscriber that left events unread past the buffer limit, and lets one big event through', async () => {
    const note = 'y'.repeat(LIVE_QUERY_LIMITS.maxBufferedBytes / 2);
    const { live, change } = instance([[1, note]]);
    const slow = sink(true);
    await subscribe(live, 'items { note }', slow.target);
    expect(slow.ended()).toBe(false);
    change('items', [2, note]);
    await expect.poll(() => slow.chunks.length).toBe(2);
    expect(slow.ended()).toBe(false);
    change('items', [3, note]);
    await expect.poll(() => slow.ended()).toBe(true);
    expect(live.subscriptions).toBe(0);
  });
});
