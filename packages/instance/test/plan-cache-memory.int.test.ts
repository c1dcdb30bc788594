/**
 * Issue 26: the plan cache is bounded by the memory its plans hold, not by their text. 2,000
 * valid queries of distinct shapes (IN lists of 6 to 1,000 values, up to 12 KB each) against
 * `replix serve` over a real MariaDB with 1,000,000 rows, held to an `xs` instance (512 MB):
 * every one is answered correctly, the resident set grows by at most the cache's budget and a
 * stated slack, stays within the instance's size, and a cheap lookup answers after.
 */
import { PLAN_CACHE_BYTES } from '@replix/engine';
import type { TestDatabase } from '@replix/testkit';
import { testMariaDb } from '@replix/testkit/vitest';
import { afterAll, beforeAll, expect, it } from 'vitest';
import { DISTINCT_SHAPE_COUNT, sendDistinctShapes } from './distinct-shapes.ts';
import {
  createHostileDatabase,
  INSTANCE_MEMORY_MB,
  type ServeChild,
  startServeChild,
} from './hostile-fixture.ts';
import { expectCheapQueryAnswers } from './hostile-instance.ts';

/**
 * What the flood may add to the resident set beyond the plan cache's budget: V8's young
 * generation and the old generation's free room after 2,000 requests of up to 12 KB, which it
 * keeps (the heap in use grows by a few MB; the resident set by 25 to 55 MB here), and the ETag
 * cache's 4 MiB (GETs only; these are POSTs). The issue measured +232 MB.
 */
const SLACK_MB = 96;

let database: TestDatabase;
let child: ServeChild;

beforeAll(async () => {
  database = await createHostileDatabase(testMariaDb());
  child = await startServeChild(database.url);
}, 300_000);

afterAll(async () => {
  await child?.stop();
  await database?.drop();
});

async function heapUsedMb(): Promise<number> {
  const answer = await child.request('/health/detail', {
    headers: { Authorization: `Bearer ${child.adminKey}` },
  });
  return (answer.body as { memory: { heap_used_mb: number } }).memory.heap_used_mb;
}

it(`${DISTINCT_SHAPE_COUNT} distinct-shape queries keep the resident set bounded`, {
  timeout: 600_000,
}, async () => {
  // Warm the server's own paths first, so the growth measured is the flood's.
  await sendDistinctShapes(child, { count: 20 });
  const before = child.rssMb();
  const heapBefore = await heapUsedMb();
  const tally = await sendDistinctShapes(child);
  const after = child.rssMb();
  const growth = after - before;
  const heapAfter = await heapUsedMb();
  const budgetMb = PLAN_CACHE_BYTES / 1024 / 1024;
  process.stderr.write(
    `plan-cache flood: VmRSS ${Math.round(before)} → ${Math.round(after)} MB (+${Math.round(growth)}), ` +
      `heap used ${heapBefore} → ${heapAfter} MB, peak VmHWM ${Math.round(child.peakRssMb())} MB, ` +
      `answers ${JSON.stringify(tally.byStatus)}\n`,
  );
  expect(child.alive(), child.exitReport()).toBe(true);
  expect(tally.failures).toEqual([]);
  expect(tally.sent).toBe(DISTINCT_SHAPE_COUNT);
  expect(growth, `VmRSS grew ${Math.round(growth)} MB`).toBeLessThanOrEqual(budgetMb + SLACK_MB);
  expect(after).toBeLessThanOrEqual(INSTANCE_MEMORY_MB);
  await expectCheapQueryAnswers(child);
});
