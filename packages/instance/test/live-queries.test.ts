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
import { afterEach, describe, expect, it, vi } from 'vitest';
import { InstanceError } from '../src/errors.ts';
import { ClientMemory } from '../src/http/client-memory.ts';
import { LIVE_QUERY_LIMITS, LiveQueries, type LiveSink } from '../src/threads/live-queries.ts';

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
function instance(rows: unknown[][], workingBytes = 1024 * 1024 * 1024) {
  const builder = new GenerationBuilder(schema);
  builder.loader('items').appendRows(rows);
  let generation: Generation = builder.finish(1);
  let runs = 0;
  let failing: Error | null = null;
  const memory = new ClientMemory(() => workingBytes);
  const live = new LiveQueries({
    current: () => ({ generation, swapCount: generation.id - 1, ageMs: 0 }),
    run: async (plan, served) => {
      runs += 1;
      if (failing) throw failing;
      return engine.answer(served.generation, plan, { version: 'v', swapCount: 0, ageMs: 0 });
    },
    bootId: 'boot',
    memory,
  });
  return {
    live,
    memory,
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

/**
 * A sink that records what it is sent, as if its client read nothing (`unread`) or all at
 * once; `read()` reads what waits and tells the subscription.
 */
function sink(unread = false) {
  const chunks: string[] = [];
  let buffered = 0;
  let ended = false;
  let destroyed = false;
  let drained = () => {};
  const target: LiveSink = {
    write(chunk) {
      chunks.push(chunk.toString());
      if (unread) buffered += chunk.length;
      return buffered;
    },
    buffered: () => buffered,
    onDrain(listener) {
      drained = listener;
    },
    end() {
      ended = true;
    },
    destroy() {
      destroyed = true;
    },
    authorized: () => true,
  };
  return {
    target,
    chunks,
    ended: () => ended,
    destroyed: () => destroyed,
    read() {
      buffered = 0;
      drained();
    },
  };
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
    const live = new LiveQueries({
      current: () => ({ generation, swapCount: 0, ageMs: 0 }),
      run: async (plan, served) => {
        await held;
        return engine.answer(served.generation, plan, { version: 'v', swapCount: 0, ageMs: 0 });
      },
      bootId: 'boot',
      memory: new ClientMemory(() => 1024 * 1024 * 1024),
    });
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
    // Disconnected at once, not ended: an ended stream keeps its bytes until the peer closes.
    await expect.poll(() => slow.destroyed()).toBe(true);
    expect(slow.ended()).toBe(false);
    expect(live.subscriptions).toBe(0);
  });
});

/**
 * Live queries over generations the test swaps in, with a runner the test steers: `slow`
 * texts take `slowMs` (so that a flood is queued while they run), each run is logged with its
 * text and generation, and `refuse` makes re-evaluations fail with an error.
 */
function steered(slowMs = 30) {
  const builder = new GenerationBuilder(schema);
  builder.loader('items').appendRows([[1, 'a']]);
  let generation: Generation = builder.finish(1);
  const texts = new Map<unknown, string>();
  const slow = new Set<string>();
  const log: { text: string; generation: number; key: string }[] = [];
  const signals: AbortSignal[] = [];
  let refuse: Error | null = null;
  let hold: Promise<void> | null = null;
  const memory = new ClientMemory(() => 1024 * 1024 * 1024);
  const live = new LiveQueries({
    current: () => ({ generation, swapCount: generation.id - 1, ageMs: 0 }),
    run: async (plan, served, signal, key) => {
      const text = texts.get(plan) ?? '';
      log.push({ text, generation: served.generation.id, key });
      signals.push(signal);
      if (hold && served.generation.id > 1) await hold;
      if (signal.aborted) throw new Error('cancelled');
      if (refuse && served.generation.id > 1) throw refuse;
      if (slow.has(text)) await new Promise((resolve) => setTimeout(resolve, slowMs));
      return engine.answer(served.generation, plan, { version: 'v', swapCount: 0, ageMs: 0 });
    },
    bootId: 'boot',
    memory,
  });
  return {
    live,
    memory,
    log,
    signals,
    subscribe(text: string, key: string, to: LiveSink, gone?: AbortSignal) {
      const plan = engine.plan(text);
      texts.set(plan, text);
      return live.subscribe(text, plan, key, undefined, to, gone);
    },
    slow(text: string) {
      slow.add(text);
    },
    refuseWith(error: Error | null) {
      refuse = error;
    },
    holdReevaluations(until: Promise<void> | null) {
      hold = until;
    },
    change(row: unknown[]) {
      generation = nextGeneration(
        generation,
        new Map([['items', [{ op: 'insert' as const, row }]]]),
        generation.id + 1,
      );
    },
    generation: () => generation.id,
  };
}

const FLOOD = Array.from({ length: 12 }, (_, i) => `items (id != ${-1 - i}) { id note }`);
const CALM = 'items { id }';

describe('live queries: fair re-evaluation by key', () => {
  it("re-evaluates a calm key's query before one key's flood of queries has run", async () => {
    const t = steered();
    for (const text of FLOOD) {
      t.slow(text);
      await t.subscribe(text, 'flood', sink().target);
    }
    const calm = sink();
    await t.subscribe(CALM, 'calm', calm.target);
    t.log.length = 0;
    t.change([2, 'b']);
    await expect.poll(() => calm.chunks.length, { timeout: 5000 }).toBe(2);
    // The calm key's turn comes after at most the one flood evaluation already running.
    const reevaluated = t.log.map((run) => run.text);
    expect(reevaluated.indexOf(CALM)).toBeLessThanOrEqual(1);
    await expect.poll(() => t.log.length, { timeout: 5000 }).toBe(FLOOD.length + 1);
    t.live.closeAll();
  });

  it('takes each evaluation to the admission gate under a key of the query: its first, then the one in turn', async () => {
    const t = steered();
    const calm = sink();
    await t.subscribe(CALM, 'calm', calm.target);
    await t.subscribe(FLOOD[0]!, 'flood', sink().target);
    expect(t.log.map((run) => run.key)).toEqual(['calm', 'flood']);
    t.log.length = 0;
    t.change([2, 'b']);
    await expect.poll(() => t.log.length, { timeout: 5000 }).toBe(2);
    const keyOf = (text: string) => t.log.find((run) => run.text === text)?.key;
    expect(keyOf(CALM)).toBe('calm');
    expect(keyOf(FLOOD[0]!)).toBe('flood');
    t.live.closeAll();
  });

  it('sends the newest result once per key turn, never an older one after it (coalesced)', async () => {
    const t = steered();
    for (const text of FLOOD) {
      t.slow(text);
      await t.subscribe(text, 'flood', sink().target);
    }
    const flooded = sink();
    await t.subscribe(FLOOD[0] as string, 'calm', flooded.target);
    const calm = sink();
    await t.subscribe(CALM, 'calm', calm.target);
    for (let id = 2; id <= 6; id++) {
      t.change([id, `n${id}`]);
      await new Promise((resolve) => setTimeout(resolve, 15));
    }
    const last = t.generation();
    const ids = (chunks: string[]) =>
      chunks.map((chunk) => Number(/^id: (\d+)\./.exec(chunk)?.[1]));
    await expect.poll(() => ids(calm.chunks).at(-1), { timeout: 10_000 }).toBe(last);
    await expect.poll(() => ids(flooded.chunks).at(-1), { timeout: 10_000 }).toBe(last);
    for (const chunks of [calm.chunks, flooded.chunks]) {
      const seen = ids(chunks);
      expect(seen).toEqual([...seen].sort((a, b) => a - b));
      expect(new Set(seen).size).toBe(seen.length);
    }
    // The flood's queries were evaluated fewer times than there were swaps: coalesced.
    const floodRuns = () => t.log.filter((run) => run.text === FLOOD[5] && run.generation > 1);
    await expect.poll(() => floodRuns().at(-1)?.generation, { timeout: 10_000 }).toBe(last);
    expect(floodRuns().length).toBeLessThan(5);
    t.live.closeAll();
  });

  it('cancels a re-evaluation whose last subscriber left', async () => {
    const t = steered();
    let release: () => void = () => {};
    t.holdReevaluations(
      new Promise<void>((resolve) => {
        release = resolve;
      }),
    );
    const end = await t.subscribe(CALM, 'key', sink().target);
    t.change([2, 'b']);
    await expect.poll(() => t.signals.length).toBe(2);
    end();
    expect(t.signals[1]?.aborted).toBe(true);
    release();
  });

  it('cancels a first evaluation whose client left', async () => {
    const t = steered();
    const gone = new AbortController();
    let release: () => void = () => {};
    const held = new Promise<void>((resolve) => {
      release = resolve;
    });
    t.slow(CALM);
    // Hold the first evaluation: the generation is 1, so hold it by a pending change instead.
    t.change([2, 'b']);
    t.holdReevaluations(held);
    const subscribing = t.subscribe(CALM, 'key', sink().target, gone.signal);
    await expect.poll(() => t.signals.length).toBe(1);
    gone.abort();
    expect(t.signals[0]?.aborted).toBe(true);
    release();
    await expect(subscribing).rejects.toThrow();
    expect(t.live.subscriptions).toBe(0);
  });
});

describe('live queries: memory held for subscribers', () => {
  it('counts buffered event bytes and held texts under the key, as the client reads and leaves', async () => {
    const t = steered();
    const slow = sink(true);
    const end = await t.subscribe(CALM, 'key', slow.target);
    const event = slow.chunks[0]?.length ?? 0;
    const text = Buffer.byteLength(CALM) * LIVE_QUERY_LIMITS.textBytesFactor;
    expect(t.live.report()).toMatchObject({
      subscriptions: 1,
      event_bytes: event,
      text_bytes: text,
    });
    expect(t.memory.bytesOf('key')).toBe(event + text);
    slow.read();
    expect(t.live.report().event_bytes).toBe(0);
    expect(t.memory.bytesOf('key')).toBe(text);
    end();
    expect(t.live.report()).toMatchObject({ subscriptions: 0, event_bytes: 0, text_bytes: 0 });
    expect(t.memory.totalBytes).toBe(0);
  });

  it('refuses a key over its share, disconnects its readers past it, and leaves other keys be', async () => {
    const note = 'z'.repeat(6 * 1024 * 1024);
    // A small instance: each key may hold its least share (16 MiB).
    const { live, memory, change } = instance([[1, note]], 1024 * 1024);
    const readers = [sink(true), sink(true)];
    for (const reader of readers) await subscribe(live, 'items { note }', reader.target);
    expect(memory.bytesOf('key')).toBeGreaterThan(12 * 1024 * 1024);
    await expect(subscribe(live, 'items { note }', sink(true).target)).rejects.toMatchObject({
      code: 'too_many_requests',
    });
    const other = sink();
    await live.subscribe(
      'items { id }',
      engine.plan('items { id }'),
      'other',
      undefined,
      other.target,
    );
    change('items', [2, 'b']);
    await expect.poll(() => readers.every((reader) => reader.destroyed())).toBe(true);
    expect(memory.bytesOf('key')).toBe(0);
    await expect.poll(() => other.chunks.length).toBe(2);
    expect(other.destroyed()).toBe(false);
    live.closeAll();
  });
});

describe('live queries: passing failures', () => {
  afterEach(() => {
    vi.useRealTimers();
  });

  it('keeps the stream open when a re-evaluation is refused for overload, and sends the result later', async () => {
    const t = steered();
    const open = sink();
    await t.subscribe(CALM, 'key', open.target);
    t.refuseWith(new InstanceError('too_many_requests', 'Busy.'));
    t.change([2, 'b']);
    await expect.poll(() => t.log.length).toBe(2);
    expect(open.ended() || open.destroyed()).toBe(false);
    expect(open.chunks.join('')).not.toContain('query-error');
    t.refuseWith(null);
    t.change([3, 'c']);
    await expect
      .poll(() => open.chunks.at(-1), { timeout: LIVE_QUERY_LIMITS.overloadRetryMs + 4000 })
      .toMatch(/^id: 3\.boot\ndata: \{"data":\[\{"id":1\},\{"id":2\},\{"id":3\}\]/);
    expect(t.live.subscriptions).toBe(1);
    t.live.closeAll();
  });

  it('ends the streams with query-retry when re-evaluations are refused for overload past the give-up time', async () => {
    vi.useFakeTimers({ toFake: ['setInterval', 'clearInterval', 'Date'] });
    const t = steered();
    const open = sink();
    await t.subscribe(CALM, 'key', open.target);
    t.refuseWith(new InstanceError('too_many_requests', 'Busy.'));
    t.change([2, 'b']);
    await vi.advanceTimersByTimeAsync(LIVE_QUERY_LIMITS.overloadGiveUpMs - 2000);
    expect(open.ended()).toBe(false);
    // Tried again about once per overloadRetryMs meanwhile, never ending the stream.
    expect(t.log.length).toBeGreaterThan(10);
    await vi.advanceTimersByTimeAsync(3000);
    expect(open.chunks.at(-1)).toBe(
      'retry: 1000\nevent: query-retry\ndata: {"error":{"code":"too_many_requests","message":"Busy."}}\n\n',
    );
    expect(open.ended()).toBe(true);
    expect(t.live.subscriptions).toBe(0);
  });

  it('ends every stream with query-retry when closing, and disconnects a reader that is behind', async () => {
    const t = steered();
    const reading = sink();
    const stalled = sink(true);
    await t.subscribe(CALM, 'key', reading.target);
    await t.subscribe(CALM, 'key', stalled.target);
    t.live.closeAll();
    expect(reading.chunks.at(-1)).toBe(
      'retry: 1000\nevent: query-retry\ndata: {"error":{"code":"service_unavailable","message":"This instance is closing; reconnect."}}\n\n',
    );
    expect(reading.ended()).toBe(true);
    expect(stalled.destroyed()).toBe(true);
    expect(t.live.subscriptions).toBe(0);
    await expect(t.subscribe(CALM, 'key', sink().target)).rejects.toMatchObject({
      code: 'service_unavailable',
    });
  });
});

describe('live queries: a subscriber that joins while a re-evaluation fails', () => {
  it('gets the failure and nothing after it: its stream is not written once ended', async () => {
    const t = steered();
    const first = sink();
    await t.subscribe(CALM, 'key', first.target);
    let release: () => void = () => {};
    t.holdReevaluations(new Promise<void>((resolve) => (release = resolve)));
    t.refuseWith(new InstanceError('bad_request', 'Refused for good.'));
    t.change([2, 'b']);
    // The re-evaluation runs (held): a new subscriber of the same query waits for it.
    await expect.poll(() => t.log.length).toBe(2);
    const joining = sink();
    const subscribing = t.subscribe(CALM, 'key', joining.target);
    release();
    await expect.poll(() => joining.ended()).toBe(true);
    const sentByEnd = joining.chunks.length;
    await subscribing;
    expect(joining.chunks.length).toBe(sentByEnd);
    expect(joining.chunks.at(-1)).toContain('event: query-error');
    expect(first.chunks.at(-1)).toContain('event: query-error');
    expect(t.live.subscriptions).toBe(0);
  });
});

describe('live queries: stalled readers', () => {
  afterEach(() => {
    vi.useRealTimers();
  });

  it('disconnects a reader that read nothing for a whole heartbeat interval while events waited', async () => {
    vi.useFakeTimers({ toFake: ['setInterval', 'clearInterval', 'Date'] });
    const { live, memory } = instance([[1, 'a']]);
    const stalled = sink(true);
    const reading = sink(true);
    await subscribe(live, 'items { id }', stalled.target);
    await subscribe(live, 'items { note }', reading.target);
    await vi.advanceTimersByTimeAsync(LIVE_QUERY_LIMITS.heartbeatMs);
    expect(stalled.destroyed()).toBe(false);
    reading.read();
    await vi.advanceTimersByTimeAsync(LIVE_QUERY_LIMITS.heartbeatMs);
    expect(stalled.destroyed()).toBe(true);
    expect(reading.destroyed()).toBe(false);
    expect(live.subscriptions).toBe(1);
    expect(memory.bytesOf('key')).toBe(
      Buffer.byteLength(': heartbeat\n\n') +
        Buffer.byteLength('items { note }') * LIVE_QUERY_LIMITS.textBytesFactor,
    );
    live.closeAll();
  });
});
