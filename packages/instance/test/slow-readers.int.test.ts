/**
 * Issue 26, "Clients that never read": clients that ask for a multi-MB answer and never read
 * it, against `replix serve` over the hostile fixture (1,000,000 rows, an `xs` instance of
 * 512 MB). Their answers are held within their key's share and cut after `http.send_timeout_ms`,
 * so another key's cheap lookups keep answering and every held byte comes back.
 */

import { mkdtempSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { HTTP_LIMITS } from '@replix/runtime';
import type { TestDatabase } from '@replix/testkit';
import { testMariaDb } from '@replix/testkit/vitest';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { CLIENT_MEMORY_KEY_MIN_BYTES, CLIENT_MEMORY_KEY_SHARE } from '../src/http/client-memory.ts';
import {
  CHEAP_QUERY,
  CHEAP_ROWS,
  createHostileDatabase,
  describeAnswer,
  INSTANCE_MEMORY_MB,
  type ServeChild,
  startServeChild,
} from './hostile-fixture.ts';
import { type NonReader, runNonReaders, startNonReader } from './non-reader.ts';

/** 160 `pay` rows, each with its `s` row's 36 KB picture: about 12 MB of JSON. */
const BIG_QUERY = 'pay { id s { * } } LIMIT 160';
const NON_READERS = 32;
const ATTACK_MS = 30_000;
const CHEAP_EVERY_MS = 50;
/**
 * Generous for a loaded 2-core machine: runs here measured p99 0.5-1 s at a load average of 10,
 * p50 about 25 ms, and 2.3 s in a full CI run on a day this machine ran at half its speed (0.19 s
 * for this file alone that day). The bench's goal is 100 ms. What this bound catches is a
 * starved key: before issue 26 most lookups got 429, and a lookup queued behind the 32 unread
 * answers waits out their send timeouts (5 s each).
 */
const CHEAP_P99_BOUND_MS = 5000;
const SEND_TIMEOUT_MS = HTTP_LIMITS.send_timeout_ms;
/** Long enough after a stall for the instance to have cut it: the timeout, its looks, slack. */
const CUT_BY_MS = SEND_TIMEOUT_MS + 3000;

const sleep = (ms: number) => new Promise((resolve) => setTimeout(resolve, ms));

let database: TestDatabase;
let child: ServeChild;
/** Another key than the non-readers' (the admin key may query, and counts as its own key). */
let otherKey: string;

beforeAll(async () => {
  database = await createHostileDatabase(testMariaDb());
  // The cheap lookups' budget is raised from 2 s: what this file measures is whether another
  // key is starved by unread answers (CHEAP_P99_BOUND_MS), not how fast a lookup runs while a
  // browser test shares the machine's two cores (a 2 s budget failed lookups in such CI runs).
  const config = join(mkdtempSync(join(tmpdir(), 'replix-slow-readers-')), 'config.json');
  writeFileSync(config, JSON.stringify({ query: { timeout_ms: 10_000 } }));
  child = await startServeChild(database.url, undefined, config);
  otherKey = child.adminKey!;
}, 300_000);

afterAll(async () => {
  await child?.stop();
  await database?.drop();
});

interface MemoryDetail {
  readonly client_held_bytes: number;
  readonly query_working_limit_bytes: number;
}

async function memoryDetail(): Promise<MemoryDetail> {
  const answer = await child.request('/health/detail', {
    headers: { Authorization: `Bearer ${otherKey}` },
  });
  return (answer.body as { memory: MemoryDetail }).memory;
}

async function sendTimeouts(): Promise<number> {
  const answer = await child.request('/metrics', {
    headers: { Authorization: `Bearer ${otherKey}` },
  });
  return Number(/^replix_send_timeouts_total (\d+)/m.exec(answer.text)?.[1] ?? Number.NaN);
}

/** Waits until the instance holds no bytes for clients; returns what it held last. */
async function heldBytesSettle(withinMs: number): Promise<number> {
  const until = performance.now() + withinMs;
  let held = (await memoryDetail()).client_held_bytes;
  while (held !== 0 && performance.now() < until) {
    await sleep(200);
    held = (await memoryDetail()).client_held_bytes;
  }
  return held;
}

function expectShareRefusal(reader: NonReader): void {
  expect(reader.status).toBe(429);
  expect(Number(reader.retryAfter)).toBeGreaterThanOrEqual(1);
  const { error } = JSON.parse(reader.bodyStart) as { error: { code: string; message: string } };
  expect(error.code).toBe('too_many_requests');
  expect(error.message).toMatch(/a key may hold \d+ MiB/);
}

const percentile = (sorted: number[], p: number) =>
  sorted[Math.min(sorted.length - 1, Math.floor((p / 100) * sorted.length))] ?? Number.NaN;

describe('clients that never read', () => {
  it('the big answer is multi-MB, and a reader that reads within the send timeout gets all of it', async () => {
    const read = await child.query(BIG_QUERY);
    expect(read.status, describeAnswer(read)).toBe(200);
    expect(read.text.length).toBeGreaterThan(8 * 1024 * 1024);
    // Stops reading for half the send timeout, then reads: not cut.
    const slow = await startNonReader(child.url, otherKey, BIG_QUERY);
    expect(slow.status).toBe(200);
    await sleep(SEND_TIMEOUT_MS / 2);
    expect(await slow.drain()).toBe(slow.contentLength);
  }, 60_000);

  it(`${NON_READERS} non-readers for ${ATTACK_MS / 1000} s: another key's cheap lookups answer, stalled sends are cut, memory comes back`, async () => {
    const timeoutsBefore = await sendTimeouts();
    const attackEnds = performance.now() + ATTACK_MS;
    const attack = runNonReaders({
      url: child.url,
      key: child.apiKey,
      text: BIG_QUERY,
      clients: NON_READERS,
      forMs: ATTACK_MS,
      unreadMs: CUT_BY_MS,
    });

    const latencies: number[] = [];
    const wrong: string[] = [];
    const cheap: Promise<void>[] = [];
    let peakHeld = 0;
    while (performance.now() < attackEnds) {
      cheap.push(
        child.query(CHEAP_QUERY, 'POST', otherKey, 10_000).then((answer) => {
          const rows = (answer.body as { data?: unknown } | undefined)?.data;
          if (answer.status === 200 && JSON.stringify(rows) === JSON.stringify(CHEAP_ROWS))
            latencies.push(answer.ms);
          else if (wrong.length < 5) wrong.push(describeAnswer(answer));
          else wrong.push('…');
        }),
      );
      if (cheap.length % 20 === 0)
        peakHeld = Math.max(peakHeld, (await memoryDetail()).client_held_bytes);
      await sleep(CHEAP_EVERY_MS);
    }
    await Promise.all(cheap);
    const outcomes = await attack;

    latencies.sort((a, b) => a - b);
    const p50 = percentile(latencies, 50);
    const p99 = percentile(latencies, 99);
    const peakRss = child.peakRssMb();
    console.log(
      `cheap lookups: ${latencies.length} right, ${wrong.length} wrong, p50 ${p50.toFixed(1)} ms, p99 ${p99.toFixed(1)} ms; ` +
        `non-readers: ${outcomes.stalled} stalled (${outcomes.cut} cut, ${outcomes.whole} whole), ${outcomes.refused} refused; ` +
        `peak held ${(peakHeld / 2 ** 20).toFixed(1)} MiB; peak RSS ${peakRss.toFixed(0)} MB`,
    );

    expect(child.alive(), child.exitReport()).toBe(true);
    expect(wrong).toEqual([]);
    expect(latencies.length).toBeGreaterThan(ATTACK_MS / CHEAP_EVERY_MS / 2);
    expect(p99).toBeLessThanOrEqual(CHEAP_P99_BOUND_MS);
    expect(outcomes.other).toEqual([]);
    expect(outcomes.stalled).toBeGreaterThan(0);
    // Every stalled answer was cut by the instance, none kept for its non-reader.
    expect(outcomes.whole).toBe(0);
    expect(outcomes.cut).toBe(outcomes.stalled);
    expect(await sendTimeouts()).toBeGreaterThanOrEqual(timeoutsBefore + outcomes.stalled);
    expect(peakRss).toBeLessThanOrEqual(INSTANCE_MEMORY_MB);
    expect(await heldBytesSettle(10_000)).toBe(0);
  }, 120_000);

  it("holds one key's unread answers within its share, refusing it past that; another key still gets its answer", async () => {
    const { query_working_limit_bytes: working } = await memoryDetail();
    const share = Math.max(
      CLIENT_MEMORY_KEY_MIN_BYTES,
      Math.floor(working * CLIENT_MEMORY_KEY_SHARE),
    );
    const held: NonReader[] = [];
    try {
      let refusal: NonReader | undefined;
      // One at a time, so each answer is counted before the next is asked for.
      for (let i = 0; i < 40 && !refusal; i++) {
        const reader = await startNonReader(child.url, child.apiKey, BIG_QUERY);
        if (reader.status === 200) held.push(reader);
        else refusal = reader;
      }
      expect(refusal, 'no refusal after 40 unread answers').toBeDefined();
      expectShareRefusal(refusal!);
      refusal!.close();
      expect(held.length).toBeGreaterThan(0);
      const detail = await memoryDetail();
      expect(detail.client_held_bytes).toBeGreaterThan(0);
      expect(detail.client_held_bytes).toBeLessThanOrEqual(share);
      // Another key is not held to this key's share.
      const other = await child.query(BIG_QUERY, 'POST', otherKey);
      expect(other.status, describeAnswer(other)).toBe(200);
    } finally {
      for (const reader of held) reader.close();
    }
    expect(await heldBytesSettle(10_000)).toBe(0);
    const after = await child.query(CHEAP_QUERY, 'POST', child.apiKey);
    expect(after.status, describeAnswer(after)).toBe(200);
  }, 120_000);
});
