import { setTimeout as realSleep } from 'node:timers/promises';
import { afterEach, beforeEach, describe, expect, it, vi } from 'vitest';
import {
  type LiveQueryOptions,
  type LiveQueryStatus,
  ReplixAuthError,
  ReplixClient,
  ReplixConnectionError,
  ReplixError,
  ReplixLimitError,
  ReplixParseError,
  ReplixUnavailableError,
} from '../src/index.ts';
import { LiveResultOrder } from '../src/live-result-order.ts';
import { ReconnectBackoff } from '../src/reconnect-backoff.ts';
import {
  errorEvent,
  type ProtocolServer,
  resultEvent,
  retryEvent,
  startProtocolServer,
} from './live-protocol-server.ts';

/** Waits, in real time (the timers are fake), until `condition` holds. */
async function until(condition: () => boolean, what = 'the condition'): Promise<void> {
  const deadline = performance.now() + 5000;
  while (!condition()) {
    if (performance.now() > deadline) throw new Error(`timed out waiting for ${what}`);
    await realSleep(2);
  }
}

/** A subscription through the SDK, with everything it reported. */
function follow(
  server: ProtocolServer,
  options: Omit<LiveQueryOptions, 'onError' | 'onStatus'> = {},
) {
  const replix = new ReplixClient({ url: server.url, key: 'rxk_test' });
  const results: string[] = [];
  const errors: ReplixError[] = [];
  const statuses: LiveQueryStatus[] = [];
  const live = replix.subscribe<{ name: string }>(
    'items { name }',
    (result) => results.push(result.data.map((row) => row.name).join(',')),
    {
      ...options,
      onError: (error) => errors.push(error),
      onStatus: (status) => statuses.push(status),
    },
  );
  const waits = () =>
    statuses.flatMap((status) => (status.state === 'reconnecting' ? [status] : []));
  return { live, results, errors, statuses, waits };
}

type Followed = ReturnType<typeof follow>;

/**
 * Checks the subscription waits exactly its `n`th announced delay: no request a millisecond
 * before it, the next one right after it.
 */
async function expectWaitHonoured(server: ProtocolServer, seen: Followed, n: number, ms: number) {
  await until(() => seen.waits().length >= n, `reconnect ${n}`);
  expect(seen.waits()[n - 1]?.delayMs).toBe(ms);
  const requests = server.lastEventIds.length;
  await vi.advanceTimersByTimeAsync(ms - 1);
  await realSleep(20);
  expect(server.lastEventIds).toHaveLength(requests);
  await vi.advanceTimersByTimeAsync(1);
  await until(() => server.lastEventIds.length === requests + 1, `request ${requests + 1}`);
}

describe('subscribe: temporary errors are temporary', () => {
  let server: ProtocolServer;
  beforeEach(async () => {
    vi.useFakeTimers({ toFake: ['setTimeout', 'clearTimeout', 'Date'] });
    // No jitter: each wait is its backoff exactly (jitter has its own test).
    vi.spyOn(Math, 'random').mockReturnValue(0);
    server = await startProtocolServer();
  });
  afterEach(async () => {
    await server.close();
    vi.restoreAllMocks();
    vi.useRealTimers();
  });

  it('reconnects after 429 and 503, waiting what Retry-After asks', async () => {
    server.answer(
      { status: 429, code: 'too_many_requests', retryAfter: '2' },
      { status: 503, code: 'service_unavailable', retryAfter: '3' },
      { events: [resultEvent(5, 'boot1', ['a'])], open: true },
    );
    const seen = follow(server);
    // The first failure waits what was asked; the second the newer ask (3 s), doubled.
    await expectWaitHonoured(server, seen, 1, 2000);
    await expectWaitHonoured(server, seen, 2, 6000);
    await until(() => seen.results.length === 1);
    expect(seen.results).toEqual(['a']);
    expect(seen.waits().map((wait) => [wait.attempt, wait.error.status, wait.error.code])).toEqual([
      [1, 429, 'too_many_requests'],
      [2, 503, 'service_unavailable'],
    ]);
    expect(seen.waits()[0]?.error).toBeInstanceOf(ReplixUnavailableError);
    expect(seen.errors).toEqual([]);
    seen.live.close();
    await seen.live.ended;
  });

  it('reconnects after query-retry, waiting its retry: delay, resuming from the last event', async () => {
    server.answer(
      { events: [resultEvent(5, 'boot1', ['a']), retryEvent(4000)] },
      // The same result again (it had it), then a newer one.
      { events: [resultEvent(5, 'boot1', ['a']), resultEvent(7, 'boot1', ['a', 'b'])], open: true },
    );
    const seen = follow(server);
    await expectWaitHonoured(server, seen, 1, 4000);
    await until(() => seen.results.length === 2);
    expect(seen.results).toEqual(['a', 'a,b']);
    expect(server.lastEventIds).toEqual([undefined, '5.boot1']);
    const wait = seen.waits()[0]!;
    expect(wait.error).toBeInstanceOf(ReplixUnavailableError);
    expect(wait.error.code).toBe('service_unavailable');
    expect((wait.error as ReplixUnavailableError).retryAfterMs).toBe(4000);
    expect(seen.errors).toEqual([]);
    seen.live.close();
  });

  it('reconnects after a query-error saying too_many_requests or service_unavailable (older instances)', async () => {
    server.answer(
      { events: [resultEvent(3, 'boot1', ['a']), errorEvent('too_many_requests')] },
      { events: [errorEvent('service_unavailable')] },
      { events: [resultEvent(4, 'boot1', ['b'])], open: true },
    );
    const seen = follow(server);
    // The stream's retry: 1000 is the advice; the result reset the backoff, so: 1 s, then 2 s.
    await expectWaitHonoured(server, seen, 1, 1000);
    await expectWaitHonoured(server, seen, 2, 2000);
    await until(() => seen.results.length === 2);
    expect(seen.results).toEqual(['a', 'b']);
    expect(server.lastEventIds).toEqual([undefined, '3.boot1', '3.boot1']);
    expect(seen.errors).toEqual([]);
    seen.live.close();
  });

  it('reconnects after a stream that ends without an error, and after a dropped connection', async () => {
    server.answer(
      { events: [resultEvent(8, 'boot1', ['a'])] },
      { destroy: true },
      { events: [resultEvent(9, 'boot1', ['a', 'b'])], open: true },
    );
    const seen = follow(server);
    await expectWaitHonoured(server, seen, 1, 1000);
    await expectWaitHonoured(server, seen, 2, 2000);
    await until(() => seen.results.length === 2);
    expect(seen.results).toEqual(['a', 'a,b']);
    expect(server.lastEventIds).toEqual([undefined, '8.boot1', '8.boot1']);
    expect(seen.waits().map((wait) => wait.error)).toEqual([
      expect.any(ReplixConnectionError),
      expect.any(ReplixConnectionError),
    ]);
    expect(seen.statuses.filter((status) => status.state === 'connected')).toHaveLength(2);
    seen.live.close();
  });

  it('backs off exponentially up to maxDelayMs, and starts over after a result', async () => {
    const refused = { status: 503, code: 'service_unavailable' } as const;
    server.answer(refused, refused, refused, refused, refused, refused, {
      events: [resultEvent(1, 'boot1', ['a'])],
    });
    server.answer(refused, { events: [resultEvent(2, 'boot1', ['b'])], open: true });
    const seen = follow(server, { retry: { baseDelayMs: 500, maxDelayMs: 5000 } });
    for (const [n, ms] of [500, 1000, 2000, 4000, 5000, 5000, 1000, 2000].entries()) {
      await expectWaitHonoured(server, seen, n + 1, ms);
    }
    await until(() => seen.results.length === 2);
    expect(seen.results).toEqual(['a', 'b']);
    expect(seen.waits().map((wait) => wait.attempt)).toEqual([1, 2, 3, 4, 5, 6, 1, 2]);
    seen.live.close();
  });

  it('never hands over a result twice, or an older one after a newer one', async () => {
    server.answer(
      { events: [resultEvent(5, 'boot1', ['a']), resultEvent(6, 'boot1', ['a', 'b'])] },
      // Another query thread behind this one: an older generation of the same boot.
      { events: [resultEvent(4, 'boot1', ['x'])] },
      // A new instance (another boot) with the same result, then a new one.
      {
        events: [resultEvent(1, 'boot2', ['a', 'b']), resultEvent(2, 'boot2', ['a', 'b', 'c'])],
        open: true,
      },
    );
    const seen = follow(server);
    await expectWaitHonoured(server, seen, 1, 1000);
    // A result arrived, though not one to hand over: the backoff starts over.
    await expectWaitHonoured(server, seen, 2, 1000);
    await until(() => seen.results.length === 3);
    expect(seen.results).toEqual(['a', 'a,b', 'a,b,c']);
    expect(server.lastEventIds).toEqual([undefined, '6.boot1', '6.boot1']);
    seen.live.close();
  });

  it('ends on a permanent query-error, with its typed error, and does not reconnect', async () => {
    server.answer({ events: [resultEvent(1, 'boot1', ['a']), errorEvent('response_too_large')] });
    const seen = follow(server);
    await seen.live.ended;
    expect(seen.errors).toEqual([expect.any(ReplixLimitError)]);
    expect(seen.errors[0]?.code).toBe('response_too_large');
    expect(seen.results).toEqual(['a']);
    expect(seen.waits()).toEqual([]);
    await realSleep(20);
    expect(server.lastEventIds).toHaveLength(1);
  });

  it.each([
    [400, 'parse_error', ReplixParseError],
    [401, 'unauthorized', ReplixAuthError],
    [403, 'forbidden', ReplixAuthError],
    [404, 'not_found', ReplixError],
  ])('ends on HTTP %i %s before the stream, and does not reconnect', async (status, code, type) => {
    server.answer({ status, code });
    const seen = follow(server);
    await seen.live.ended;
    expect(seen.errors).toEqual([expect.any(type)]);
    expect(seen.errors[0]).toMatchObject({ status, code });
    expect(seen.waits()).toEqual([]);
    expect(server.lastEventIds).toHaveLength(1);
  });

  it('reconnects after a server or proxy failure (5xx), as after a refusal', async () => {
    server.answer(
      { status: 502, code: 'bad_gateway' },
      { status: 500, code: 'internal_error' },
      { events: [resultEvent(1, 'boot1', ['a'])], open: true },
    );
    const seen = follow(server);
    await expectWaitHonoured(server, seen, 1, 1000);
    await expectWaitHonoured(server, seen, 2, 2000);
    await until(() => seen.results.length === 1);
    expect(seen.errors).toEqual([]);
    seen.live.close();
  });

  it('stops during a backoff wait when its signal aborts, without an error', async () => {
    server.answer({ status: 503, code: 'service_unavailable', retryAfter: '30' });
    const abort = new AbortController();
    const seen = follow(server, { signal: abort.signal });
    await until(() => seen.waits().length === 1);
    abort.abort();
    // It ends at once, with no timer advanced.
    await seen.live.ended;
    await vi.advanceTimersByTimeAsync(60_000);
    await realSleep(20);
    expect(server.lastEventIds).toHaveLength(1);
    expect(seen.errors).toEqual([]);
  });
});

describe('ReconnectBackoff', () => {
  it('adds up to half again of jitter, never past maxDelayMs', () => {
    const backoff = new ReconnectBackoff({ baseDelayMs: 1000, maxDelayMs: 3000 }, () => 1);
    expect([backoff.next(), backoff.next(), backoff.next()]).toEqual([1500, 3000, 3000]);
    const low = new ReconnectBackoff({ baseDelayMs: 1000, maxDelayMs: 3000 }, () => 0.5);
    expect(low.next()).toBe(1250);
  });

  it('starts from the latest advice, at least 100 ms, capped at maxDelayMs', () => {
    const backoff = new ReconnectBackoff({}, () => 0);
    backoff.advise(0);
    expect([backoff.next(), backoff.next()]).toEqual([100, 200]);
    backoff.reset();
    backoff.advise(60_000);
    expect(backoff.next()).toBe(30_000);
  });

  it('refuses settings that are not a number of milliseconds', () => {
    expect(() => new ReconnectBackoff({ maxDelayMs: -1 })).toThrow(TypeError);
    expect(() => new ReconnectBackoff({ baseDelayMs: Number.NaN })).toThrow(TypeError);
  });
});

describe('LiveResultOrder', () => {
  const body = (names: string, timing: number) =>
    `{"data":[${names}],"meta":{"table":"t","timing_ms":${timing},"snapshot":{"swap_count":${timing}}}}`;

  it('resumes from the newest id seen, and compares results without timing and snapshot', () => {
    const order = new LiveResultOrder();
    expect(order.accept('3.b1', body('1', 3))).toBe(true);
    expect(order.accept('4.b1', body('1', 4))).toBe(false);
    expect(order.lastEventId).toBe('4.b1');
    expect(order.accept('2.b1', body('2', 2))).toBe(false);
    expect(order.lastEventId).toBe('4.b1');
    expect(order.accept('1.b2', body('2', 1))).toBe(true);
    expect(order.lastEventId).toBe('1.b2');
  });
});
