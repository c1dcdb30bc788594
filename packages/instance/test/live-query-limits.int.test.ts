/**
 * Issue 26's live-query attacks against `replix serve` held to an `xs` instance (512 MB) over
 * the hostile fixture's 1,000,000 rows in a real MariaDB: readers of a large result that never
 * read, and one key's flood of expensive live queries beside another key's cheap one.
 */
import type { TestDatabase } from '@replix/testkit';
import { testMariaDb } from '@replix/testkit/vitest';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { percentile } from '../../../bench/lib/percentile.ts';
import { LIVE_QUERY_LIMITS } from '../src/threads/live-queries.ts';
import { createHostileDatabase, INSTANCE_MEMORY_MB } from './hostile-fixture.ts';
import { type HostileInstance, startHostileInstance } from './hostile-instance.ts';
import { liveDetail, liveQueryFlood, pausedLiveReaders } from './live-attacks.ts';

/** `replix serve`'s sync interval (schema config's default `sync.interval`). */
const SYNC_INTERVAL_MS = 1000;
/**
 * The bound the docs give is the sync interval + 500 ms at p95; the test allows more, for a
 * loaded 2-core machine shared with other work (it prints the real figures).
 */
const DELAY_P95_BOUND_MS = SYNC_INTERVAL_MS + 2000;

let database: TestDatabase;
let instance: HostileInstance;

beforeAll(async () => {
  database = await createHostileDatabase(testMariaDb());
  instance = await startHostileInstance(database);
}, 300_000);

afterAll(async () => {
  await instance?.stop();
  await database?.drop();
});

describe('live queries an attacker with a query key cannot take the instance down with', () => {
  it('40 paused readers of a large result: held bytes bounded and reported, readers behind disconnected, RSS within the instance', async () => {
    const { child } = instance;
    const result = await pausedLiveReaders(child, database, 20);
    console.log('paused live readers:', JSON.stringify(result));
    expect(child.alive(), child.exitReport()).toBe(true);
    // The key's share of client memory admits a few such streams; the rest are refused, with
    // Retry-After, and nothing else goes wrong.
    expect(result.opened).toBeGreaterThan(0);
    expect(result.refused).toBeGreaterThan(0);
    expect(result.refusedWithoutRetryAfter).toBe(0);
    expect(result.otherStatuses).toEqual([]);
    // What the paused streams hold is counted, and one key holds at most a quarter of the
    // working memory (or 16 MiB).
    expect(result.peakEventBytes).toBeGreaterThan(0);
    const { memory } = await liveDetail(child);
    const share = Math.max(16 * 1024 * 1024, (memory.query_working_limit_bytes ?? 0) / 4);
    expect(result.peakEventBytes).toBeLessThanOrEqual(share + result.resultBytes);
    // Owed an event they had no room for, the readers were disconnected and their places freed.
    expect(result.subscriptionsAfterChange).toBe(0);
    expect(result.eventBytesAfterChange).toBe(0);
    expect(result.metricEventBytesAfterChange).toBe(0);
    // Disconnected, not ended: what was buffered for a reader went with its socket.
    expect(result.bytesOfDisconnected).toBeLessThan(
      result.resultBytes + LIVE_QUERY_LIMITS.maxBufferedBytes,
    );
    expect(result.peakRssMb).toBeLessThanOrEqual(INSTANCE_MEMORY_MB);
  }, 180_000);

  it("one key's 60 expensive live queries delay another key's cheap one by little, and its last update always arrives", async () => {
    const { child } = instance;
    const result = await liveQueryFlood(child, database, 20);
    const p50 = percentile(result.delaysMs, 50);
    const p95 = percentile(result.delaysMs, 95);
    console.log(
      `live-query flood: flood query ${result.floodQueryMs} ms alone, ${result.floodOpened} opened; ` +
        `other key's update delay p50 ${Math.round(p50)} ms, p95 ${Math.round(p95)} ms, ` +
        `max ${Math.round(Math.max(...result.delaysMs))} ms over ${result.updates} updates, ${result.lost} lost`,
    );
    expect(child.alive(), child.exitReport()).toBe(true);
    expect(result.floodOpened).toBe(60);
    expect(result.finalArrived).toBe(true);
    expect(result.delaysMs.length).toBeGreaterThan(5);
    expect(p95).toBeLessThanOrEqual(DELAY_P95_BOUND_MS);
  }, 180_000);
});
