/**
 * Issue 26's distinct-shape flood over the hostile fixture (hostile-fixture.ts): valid queries
 * whose shapes all differ, IN lists of 6 to 1,000 values of `c`'s primary key, up to 12 KB of
 * text each, so each one is a plan cache miss that a cache bounded only by entries or by text
 * would keep. Shared by the plan-cache memory test and `bench/lib/hostile-phases/shape-flood-phase.ts`.
 */
import { runBounded } from './bounded-pool.ts';
import { C_ROWS, describeAnswer, type ServeChild } from './hostile-fixture.ts';

/** How many queries the flood sends: every one a shape of its own. */
export const DISTINCT_SHAPE_COUNT = 2000;

const SHORTEST_LIST = 6;
const LONGEST_LIST = 1000;
const LENGTHS = LONGEST_LIST - SHORTEST_LIST + 1;
/** The selections a list length is sent with: 3 × 995 lengths give 2,985 distinct shapes. */
const SELECTIONS = ['id', 'id n', 'id v'];

export interface DistinctShapeQuery {
  readonly text: string;
  /** The rows a correct answer has: every value is a distinct existing `c.id`. */
  readonly rows: number;
}

/**
 * The `i`-th query of the flood (0 ≤ i < 2,985): its IN list's length and its selection make its
 * shape. Each id is written with a fraction of zeros to 10 characters (`12345.0000`, a valid
 * integer literal), so a 1,000-value list is 12 KB as in the issue.
 */
export function distinctShapeQuery(i: number): DistinctShapeQuery {
  const length = SHORTEST_LIST + (i % LENGTHS);
  const selection = SELECTIONS[Math.floor(i / LENGTHS) % SELECTIONS.length];
  const ids: string[] = [];
  // 997 is prime to C_ROWS: the ids of one list are all different.
  for (let j = 0; j < length; j++) ids.push(padded(1 + ((i * 1009 + j * 997) % C_ROWS)));
  return { text: `c (id IN (${ids.join(', ')})) { ${selection} }`, rows: length };
}

function padded(id: number): string {
  const digits = String(id);
  return `${digits}.${'0'.repeat(9 - digits.length)}`;
}

export interface DistinctShapeTally {
  /** Queries answered (or failed to be): fewer than asked when the deadline came first. */
  readonly sent: number;
  /** Answers by HTTP status; NO_ANSWER (0) counts requests that got none. */
  readonly byStatus: Readonly<Record<number, number>>;
  /** 200 answers whose rows were not the list's: a wrong answer. */
  readonly wrongRows: number;
  /** A few answers that were not a correct 200, described for a report. */
  readonly failures: readonly string[];
}

/**
 * Sends the first `count` flood queries to `child`, `concurrency` at a time (POST, the query
 * key), until they are all answered, `deadline` (`performance.now()`) passes or the child dies.
 */
export async function sendDistinctShapes(
  child: ServeChild,
  { count = DISTINCT_SHAPE_COUNT, concurrency = 4, deadline = Infinity } = {},
): Promise<DistinctShapeTally> {
  const byStatus: Record<number, number> = {};
  const failures: string[] = [];
  let wrongRows = 0;
  const sent = await runBounded(
    Array.from({ length: count }, (_, i) => i),
    concurrency,
    async (i) => {
      const query = distinctShapeQuery(i);
      const answer = await child.query(query.text);
      byStatus[answer.status] = (byStatus[answer.status] ?? 0) + 1;
      const rows = (answer.body as { data?: unknown[] } | undefined)?.data?.length;
      if (answer.status === 200 && rows === query.rows) return;
      if (answer.status === 200) wrongRows++;
      if (failures.length < 5) failures.push(`#${i}: ${describeAnswer(answer)}, rows ${rows}`);
    },
    () => performance.now() > deadline || !child.alive(),
  );
  return { sent, byStatus, wrongRows, failures };
}
