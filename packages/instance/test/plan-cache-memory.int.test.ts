/**
 * Issue 26: the plan cache is bounded by the memory its plans hold, not by their text. Floods of
 * 2,000 valid queries of distinct shapes against `replix serve` over a real MariaDB, held to an
 * `xs` instance (512 MB): issue 26's IN lists of 6 to 1,000 values (up to 12 KB each) over the
 * hostile fixture's 1,000,000 rows, and `...` on a wide table (a few bytes of text, a plan of
 * 2,200 fields). Every query is answered correctly, the resident set grows by at most the cache's
 * budget and a stated slack and stays within the instance's size, and a cheap lookup answers.
 */
import { PLAN_CACHE_BYTES } from '@replix/engine';
import type { TestDatabase } from '@replix/testkit';
import { testMariaDb } from '@replix/testkit/vitest';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { runBounded } from './bounded-pool.ts';
import { DISTINCT_SHAPE_COUNT, sendDistinctShapes } from './distinct-shapes.ts';
import {
  createHostileDatabase,
  describeAnswer,
  INSTANCE_MEMORY_MB,
  type ServeChild,
  startServeChild,
} from './hostile-fixture.ts';
import { expectCheapQueryAnswers } from './hostile-instance.ts';

/**
 * What a flood may add to the resident set beyond the plan cache's budget: V8's young
 * generation and the old generation's free room after 2,000 requests of up to 12 KB, which it
 * keeps (the heap in use grows by 10 to 20 MB; the resident set by 3 to 65 MB here), and the ETag
 * cache's 4 MiB (GETs only; these are POSTs). The issue measured +232 MB; the wide-table flood
 * grew it by 269 MB before plans were counted by what they hold.
 */
const SLACK_MB = 128;
const BOUND_MB = PLAN_CACHE_BYTES / 1024 / 1024 + SLACK_MB;

async function heapUsedMb(child: ServeChild): Promise<number> {
  const answer = await child.request('/health/detail', {
    headers: { Authorization: `Bearer ${child.adminKey}` },
  });
  return (answer.body as { memory: { heap_used_mb: number } }).memory.heap_used_mb;
}

/** Runs `flood` and checks the child's resident set afterwards, printing the figures. */
async function expectBoundedFlood(
  label: string,
  child: ServeChild,
  flood: () => Promise<unknown>,
): Promise<void> {
  const before = child.rssMb();
  const heapBefore = await heapUsedMb(child);
  const outcome = await flood();
  const after = child.rssMb();
  const growth = after - before;
  process.stderr.write(
    `${label}: VmRSS ${Math.round(before)} → ${Math.round(after)} MB (+${Math.round(growth)}, ` +
      `bound ${BOUND_MB}), heap used ${heapBefore} → ${await heapUsedMb(child)} MB, ` +
      `peak VmHWM ${Math.round(child.peakRssMb())} MB, ${JSON.stringify(outcome)}\n`,
  );
  expect(child.alive(), child.exitReport()).toBe(true);
  expect(growth, `VmRSS grew ${Math.round(growth)} MB`).toBeLessThanOrEqual(BOUND_MB);
  expect(after).toBeLessThanOrEqual(INSTANCE_MEMORY_MB);
}

describe('IN lists of 6 to 1,000 values over 1,000,000 rows', () => {
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

  it(`${DISTINCT_SHAPE_COUNT} distinct shapes keep the resident set bounded`, {
    timeout: 600_000,
  }, async () => {
    // Warm the server's own paths first, so the growth measured is the flood's.
    await sendDistinctShapes(child, { count: 20 });
    let failures: readonly string[] = [];
    await expectBoundedFlood('IN-list flood', child, async () => {
      const tally = await sendDistinctShapes(child);
      failures = tally.failures;
      expect(tally.sent).toBe(DISTINCT_SHAPE_COUNT);
      return tally.byStatus;
    });
    expect(failures).toEqual([]);
    await expectCheapQueryAnswers(child);
  });
});

const WIDE_COLUMNS = 200;
const WIDE_KEYS = 10;
const WIDE_ROWS = 10;

/** `a` with 200 columns, 10 of them foreign keys to `b`, which has 200 columns too. */
function wideDdl(): string {
  const yColumns = Array.from(
    { length: WIDE_COLUMNS - 1 },
    (_, i) => `y${i} INT NOT NULL DEFAULT ${i}`,
  );
  const keys = Array.from({ length: WIDE_KEYS }, (_, i) => `b${i}`);
  const xColumns = Array.from(
    { length: WIDE_COLUMNS - 1 - WIDE_KEYS },
    (_, i) => `x${i} INT NOT NULL DEFAULT ${i}`,
  );
  return `
CREATE TABLE b (id INT PRIMARY KEY, ${yColumns.join(', ')});
CREATE TABLE a (
  id INT PRIMARY KEY, ${keys.map((key) => `${key} INT NOT NULL`).join(', ')}, ${xColumns.join(', ')},
  ${keys.map((key) => `FOREIGN KEY (${key}) REFERENCES b (id)`).join(', ')}
);
INSERT INTO b (id) SELECT seq FROM seq_1_to_${WIDE_ROWS};
INSERT INTO a (id, ${keys.join(', ')}) SELECT seq, ${keys.map(() => 'seq').join(', ')} FROM seq_1_to_${WIDE_ROWS};
`;
}

describe('`...` on a wide table: a short text, a big plan', () => {
  let database: TestDatabase;
  let child: ServeChild;

  beforeAll(async () => {
    database = await testMariaDb().createDatabase(wideDdl());
    child = await startServeChild(database.url);
  }, 300_000);

  afterAll(async () => {
    await child?.stop();
    await database?.drop();
  });

  it(`${DISTINCT_SHAPE_COUNT} distinct shapes keep the resident set bounded`, {
    timeout: 600_000,
  }, async () => {
    // Each a shape of its own by its layout; each plan 200 fields and 10 relations of 200.
    const query = (i: number) => `a${' '.repeat(1 + i)}{ ... } LIMIT 1`;
    const failures: string[] = [];
    await expectBoundedFlood('wide-table flood', child, async () => {
      const byStatus: Record<number, number> = {};
      await runBounded(
        Array.from({ length: DISTINCT_SHAPE_COUNT }, (_, i) => i),
        4,
        async (i) => {
          const answer = await child.query(query(i));
          byStatus[answer.status] = (byStatus[answer.status] ?? 0) + 1;
          const row = (answer.body as { data?: Record<string, unknown>[] } | undefined)?.data?.[0];
          const fields = row ? Object.keys(row).length : 0;
          if (answer.status === 200 && fields === WIDE_COLUMNS + WIDE_KEYS) return;
          if (failures.length < 5)
            failures.push(`#${i}: ${describeAnswer(answer)}, ${fields} fields`);
        },
        () => !child.alive(),
      );
      return byStatus;
    });
    expect(failures).toEqual([]);
    const answer = await child.query('a (id = 7) { id b_by_b3 { id y5 } }');
    expect(answer.status, describeAnswer(answer)).toBe(200);
    expect((answer.body as { data: unknown }).data).toEqual([{ id: 7, b_by_b3: { id: 7, y5: 5 } }]);
  });
});
