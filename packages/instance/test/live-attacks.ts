/**
 * Issue 26's live-query attacks on the hostile fixture (hostile-fixture.ts), shared by
 * `live-query-limits.int.test.ts` and the bench's phases (bench/lib/hostile-phases/), so it
 * imports nothing from Vitest: readers that open a stream of a large result and never read
 * it, and one key's flood of expensive live queries beside another key's cheap one.
 */
import { connect, type Socket } from 'node:net';
import { EventStreamReader, type TestDatabase } from '@replix/testkit';
import { runBounded } from './bounded-pool.ts';
import type { ServeChild } from './hostile-fixture.ts';

/** A live query whose result is about 14 MB (200 `pay` rows, each with its 36 KB picture). */
export const LARGE_LIVE_QUERY = 'pay { id amount s { id picture } } LIMIT 200';

/** The other key's cheap live query, and the `p` row its updates change. */
export const CHEAP_LIVE_QUERY = 'p (id = 1) { id n }';

/** The `i`th of the flood's distinct live queries: each scans all of `c` (about 100 ms). */
export function floodQuery(i: number): string {
  return `c (v LIKE '%${i}7a') { id } ORDER BY n DESC LIMIT 3`;
}

/** A stream opened on a connection of its own that reads its response head, then pauses. */
export interface PausedReader {
  readonly status: number;
  readonly retryAfter: string | undefined;
  /** Bytes read before pausing (the head and what came with it). */
  readonly bytesRead: number;
  /** Reads on until the connection ends or `ms` pass: the bytes that arrived in all. */
  drain(ms: number): Promise<number>;
  close(): void;
}

/** Opens a live query with `key` on a new connection; pauses it once the head is in. */
export function openPausedReader(url: string, text: string, key: string): Promise<PausedReader> {
  const { hostname, port } = new URL(url);
  const socket: Socket = connect(Number(port), hostname);
  // A reset by the instance (it disconnected a reader that is behind) is what we wait for.
  socket.on('error', () => {});
  socket.write(
    `GET /query?q=${encodeURIComponent(text)} HTTP/1.1\r\nHost: ${hostname}:${port}\r\n` +
      `Authorization: Bearer ${key}\r\nAccept: text/event-stream\r\n\r\n`,
  );
  return new Promise((resolve, reject) => {
    let head = '';
    let bytes = 0;
    const timer = setTimeout(() => {
      socket.destroy();
      reject(new Error('no response head within 60 s'));
    }, 60_000);
    const onData = (chunk: Buffer) => {
      bytes += chunk.length;
      head += chunk.toString('latin1');
      const end = head.indexOf('\r\n\r\n');
      if (end < 0) return;
      clearTimeout(timer);
      socket.off('data', onData);
      socket.pause();
      const status = Number(/^HTTP\/1\.1 (\d{3})/.exec(head)?.[1] ?? 0);
      const retryAfter = /\r\nretry-after: *([^\r]*)/i.exec(head.slice(0, end))?.[1];
      resolve({
        status,
        retryAfter,
        bytesRead: bytes,
        drain(ms) {
          return new Promise((done) => {
            let total = bytes;
            const finish = () => {
              clearTimeout(stop);
              socket.destroy();
              done(total);
            };
            const stop = setTimeout(finish, ms);
            socket.on('data', (more: Buffer) => {
              total += more.length;
            });
            socket.once('close', finish);
            socket.resume();
          });
        },
        close: () => socket.destroy(),
      });
    };
    socket.on('data', onData);
    socket.once('close', () => {
      clearTimeout(timer);
      reject(new Error('the connection closed before a response head'));
    });
  });
}

/** `live_queries` of `/health/detail` (the thread that answered). */
export interface LiveQueriesDetail {
  readonly subscriptions: number;
  readonly queries: number;
  readonly event_bytes: number;
  readonly text_bytes: number;
  readonly reevaluations_due: number;
}

/** Reads `/health/detail` with the admin key: its `live_queries` and `memory`. */
export async function liveDetail(
  child: ServeChild,
): Promise<{ live: LiveQueriesDetail; memory: Record<string, number> }> {
  const answer = await child.request('/health/detail', {
    headers: { Authorization: `Bearer ${child.adminKey}` },
  });
  const body = answer.body as { live_queries?: LiveQueriesDetail; memory: Record<string, number> };
  if (answer.status !== 200)
    throw new Error(`/health/detail answered ${answer.status}: ${answer.text.slice(0, 200)}`);
  // An instance that reports no live queries shows as none (what the attack measures is RSS).
  const none = {
    subscriptions: 0,
    queries: 0,
    event_bytes: 0,
    text_bytes: 0,
    reevaluations_due: 0,
  };
  return { live: body.live_queries ?? none, memory: body.memory };
}

/** One gauge of `/metrics` (admin key), or NaN when it is missing. */
export async function metricValue(child: ServeChild, name: string): Promise<number> {
  const answer = await child.request('/metrics', {
    headers: { Authorization: `Bearer ${child.adminKey}` },
  });
  const match = new RegExp(`^${name} (\\S+)$`, 'm').exec(answer.text);
  return match ? Number(match[1]) : Number.NaN;
}

const sleep = (ms: number) => new Promise((resolve) => setTimeout(resolve, ms));

/** Waits until `check` holds (polled every 100 ms) or `ms` pass; whether it held. */
export async function waitFor(check: () => Promise<boolean>, ms: number): Promise<boolean> {
  const deadline = Date.now() + ms;
  for (;;) {
    if (await check()) return true;
    if (Date.now() >= deadline) return false;
    await sleep(100);
  }
}

/** What the paused-reader attack saw. */
export interface PausedReadersResult {
  /** Streams opened (200) and refused (429/503, with Retry-After or not), over both waves. */
  readonly opened: number;
  readonly refused: number;
  readonly refusedWithoutRetryAfter: number;
  readonly otherStatuses: number[];
  /** The most event and client bytes `/health/detail` showed held, and the key's share. */
  readonly peakEventBytes: number;
  readonly peakHeldBytes: number;
  /** The instance's resident set: the most sampled during the attack. */
  readonly peakRssMb: number;
  /** Subscriptions left once a change was sent to the paused readers, and how long that took. */
  readonly subscriptionsAfterChange: number;
  readonly freedWithinMs: number;
  /** Event bytes `/health/detail` and `/metrics` held after the readers were disconnected. */
  readonly eventBytesAfterChange: number;
  readonly metricEventBytesAfterChange: number;
  /** Bytes a disconnected reader got when it read at last, against one whole result event. */
  readonly bytesOfDisconnected: number;
  readonly resultBytes: number;
}

/**
 * `count` readers of `LARGE_LIVE_QUERY` with the query key, each on its own connection, that
 * never read past the response head; then a change to the rows they watch (the instance has
 * to send each an event it cannot hold), and a second wave of as many, as an attacker whose
 * places were freed would. Runs about `seconds` in all, sampling RSS and `/health/detail`.
 */
export async function pausedLiveReaders(
  child: ServeChild,
  source: TestDatabase,
  seconds: number,
  count = 40,
): Promise<PausedReadersResult> {
  const statuses: PausedReader[] = [];
  const readers: PausedReader[] = [];
  let peakEventBytes = 0;
  let peakHeldBytes = 0;
  let peakRssMb = 0;
  let sampling = true;
  const sampler = (async () => {
    while (sampling) {
      peakRssMb = Math.max(peakRssMb, child.rssMb() || 0);
      const { live, memory } = await liveDetail(child).catch(() => ({
        live: { event_bytes: 0 } as LiveQueriesDetail,
        memory: {} as Record<string, number>,
      }));
      peakEventBytes = Math.max(peakEventBytes, live.event_bytes);
      peakHeldBytes = Math.max(peakHeldBytes, memory.query_working_bytes ?? 0);
      await sleep(100);
    }
  })();
  const resultBytes = (await child.query(LARGE_LIVE_QUERY, 'POST', child.apiKey, 30_000)).text
    .length;
  const started = Date.now();
  const wave = async () => {
    const opened = await Promise.all(
      Array.from({ length: count }, () =>
        openPausedReader(child.url, LARGE_LIVE_QUERY, child.apiKey),
      ),
    );
    statuses.push(...opened);
    for (const reader of opened) {
      if (reader.status === 200) readers.push(reader);
      else reader.close();
    }
  };
  await wave();
  await sleep(Math.max(0, (seconds * 1000) / 3 - (Date.now() - started)));
  // A change to the rows they watch: every paused reader is owed an event it has no room for.
  const changedAt = Date.now();
  await source.exec('UPDATE pay SET amount = amount + 1 WHERE id = 1');
  let after = (await liveDetail(child)).live;
  await waitFor(async () => {
    after = (await liveDetail(child)).live;
    return after.subscriptions === 0;
  }, 20_000);
  const freedWithinMs = Date.now() - changedAt;
  const metricEventBytesAfterChange = await metricValue(child, 'replix_live_event_bytes');
  const first = readers[0];
  const bytesOfDisconnected = first ? await first.drain(3000) : 0;
  for (const reader of readers.splice(0)) reader.close();
  await wave();
  await sleep(Math.max(0, seconds * 1000 - (Date.now() - started)));
  for (const reader of readers.splice(0)) reader.close();
  sampling = false;
  await sampler;
  const refusals = statuses.filter((reader) => reader.status === 429 || reader.status === 503);
  return {
    opened: statuses.filter((reader) => reader.status === 200).length,
    refused: refusals.length,
    refusedWithoutRetryAfter: refusals.filter((reader) => !reader.retryAfter).length,
    otherStatuses: statuses
      .map((reader) => reader.status)
      .filter((status) => status !== 200 && status !== 429 && status !== 503),
    peakEventBytes,
    peakHeldBytes,
    peakRssMb,
    subscriptionsAfterChange: after.subscriptions,
    freedWithinMs,
    eventBytesAfterChange: after.event_bytes,
    metricEventBytesAfterChange,
    bytesOfDisconnected,
    resultBytes,
  };
}

/** What the flood showed of the other key's cheap live query. */
export interface LiveFloodResult {
  /** The server's time for one flood query, alone (its `meta.timing_ms`). */
  readonly floodQueryMs: number;
  readonly floodOpened: number;
  /** Commits of the other key's row, and how long each took to arrive as an event (ms). */
  readonly updates: number;
  readonly delaysMs: readonly number[];
  /** Updates never seen as an event (a newer one came instead), and whether the last came. */
  readonly lost: number;
  readonly finalArrived: boolean;
}

/**
 * One key's `floods` distinct expensive live queries (query key) beside another key's cheap
 * one (admin key), while the source changes every `everyMs`: each change touches a `c` row
 * (so every flood query is due again) and sets the cheap query's row to a new value, whose
 * arrival the other key times. Runs about `seconds`.
 */
export async function liveQueryFlood(
  child: ServeChild,
  source: TestDatabase,
  seconds: number,
  floods = 60,
  everyMs = 1500,
): Promise<LiveFloodResult> {
  const otherKey = child.adminKey;
  if (!otherKey) throw new Error('the instance printed no admin key: no other key to time');
  const alone = await child.query(floodQuery(0), 'POST', child.apiKey, 30_000);
  const floodQueryMs =
    (alone.body as { meta?: { timing_ms?: number } } | undefined)?.meta?.timing_ms ?? Number.NaN;
  /** Opens a stream, as a client would: again after a refusal's Retry-After, for up to 60 s. */
  const open = async (text: string, key: string): Promise<EventStreamReader | null> => {
    const deadline = Date.now() + 60_000;
    for (;;) {
      const response = await fetch(`${child.url}/query?q=${encodeURIComponent(text)}`, {
        headers: { Authorization: `Bearer ${key}`, Accept: 'text/event-stream' },
      }).catch(() => null);
      if (response?.status === 200) return new EventStreamReader(response);
      await response?.body?.cancel();
      const retryAfter = Number(response?.headers.get('retry-after') ?? Number.NaN);
      if (!(retryAfter >= 0) || Date.now() > deadline) return null;
      await sleep(retryAfter * 1000);
    }
  };
  // Opened a few at a time: 60 first evaluations at once would each run past the time budget.
  const flood: (EventStreamReader | null)[] = [];
  await runBounded(
    Array.from({ length: floods }, (_, i) => floodQuery(i)),
    3,
    async (text) => {
      flood.push(await open(text, child.apiKey));
    },
  );
  const readers = flood.filter((reader): reader is EventStreamReader => reader !== null);
  // The flood's streams are read (their events are small) so only the instance is measured.
  let reading = true;
  const floodReading = readers.map(async (reader) => {
    while (reading && !reader.ended) await reader.next(500);
  });
  const cheap = await open(CHEAP_LIVE_QUERY, otherKey);
  if (!cheap) throw new Error('the other key could not open its live query');
  if (!(await cheap.next(30_000))) throw new Error('the other key got no first result');
  const arrivals = new Map<number, number>();
  let cheapReading = true;
  const cheapDone = (async () => {
    while (cheapReading && !cheap.ended) {
      const event = await cheap.next(500);
      if (event?.event !== 'message') continue;
      const n = (JSON.parse(event.data) as { data: { n: number }[] }).data[0]?.n;
      if (n !== undefined && !arrivals.has(n)) arrivals.set(n, Date.now());
    }
  })();
  const commits = new Map<number, number>();
  const started = Date.now();
  let value = 100_000 + Math.floor(Math.random() * 1_000_000);
  let row = 1;
  while (Date.now() - started < seconds * 1000) {
    value += 1;
    row = (row % 1000) + 2;
    await source.exec(`UPDATE c SET n = (n + 1) % 97 WHERE id = ${row}`);
    await source.exec(`UPDATE p SET n = ${value} WHERE id = 1`);
    commits.set(value, Date.now());
    await sleep(everyMs);
  }
  const finalArrived = await waitFor(async () => arrivals.has(value), 20_000);
  cheapReading = false;
  reading = false;
  await Promise.all([cheapDone, ...floodReading]);
  await Promise.all([cheap.close(), ...readers.map((reader) => reader.close())]);
  const delaysMs: number[] = [];
  let lost = 0;
  for (const [n, committedAt] of commits) {
    const arrived = arrivals.get(n);
    if (arrived === undefined) lost += 1;
    else delaysMs.push(arrived - committedAt);
  }
  return {
    floodQueryMs,
    floodOpened: readers.length,
    updates: commits.size,
    delaysMs,
    lost,
    finalArrived,
  };
}
