/**
 * The pathological query shapes of issue 12's table, over the hostile fixture (hostile-fixture.ts),
 * with the answers each may get once the defences are in: shared by the hostile-query suite and
 * `bench/hostile.ts`.
 */

/** Error codes a query over a budget or structural cap may get (all 400). */
export const BUDGET_CODES = [
  'query_timeout',
  'too_many_rows',
  'response_too_large',
  'query_too_complex',
] as const;

export interface HostileShape {
  readonly name: string;
  readonly text: string;
  /** The codes a 4xx answer may carry. */
  readonly codes: readonly string[];
  /**
   * SQL whose `id` column, in order, is the only correct 200 answer (LIMIT included); absent
   * when no 200 can be within the budgets.
   */
  readonly sql?: string;
}

const repeatJoined = (count: number, make: (i: number) => string, separator: string) =>
  Array.from({ length: count }, (_, i) => make(i)).join(separator);

/** `c (id < 2 AND p.c.p.c.p.c.n = -1)` as SQL: each hop a semi-join. */
const RELATION_CHAIN_SQL = `SELECT c1.id FROM c c1 WHERE c1.id < 2 AND EXISTS (
  SELECT 1 FROM c c2 WHERE c2.p_id = c1.p_id AND EXISTS (
    SELECT 1 FROM c c3 WHERE c3.p_id = c2.p_id AND EXISTS (
      SELECT 1 FROM c c4 WHERE c4.p_id = c3.p_id AND c4.n = -1)))
  ORDER BY c1.id`;

export const HOSTILE_SHAPES: readonly HostileShape[] = [
  {
    // 40 × 1,000 × 1 × 1,000 rows: far over max_rows, and the issue's heap-out-of-memory abort.
    name: 'four nested levels p { c { p { c } } } LIMIT 40',
    text: 'p { id c { id p { id c { id } } } } LIMIT 40',
    codes: BUDGET_CODES,
  },
  {
    name: 'five nested levels p { c { p { c { p } } } } LIMIT 1000',
    text: 'p { id c { id p { id c { id p { id } } } } } LIMIT 1000',
    codes: BUDGET_CODES,
  },
  {
    // Duplicate keys collapse to ORDER BY n: a correct single row, or a structural refusal.
    name: '400 duplicate ORDER BY keys over 1M rows, LIMIT 1',
    text: `c { id } ORDER BY ${repeatJoined(400, () => 'n', ', ')} LIMIT 1`,
    codes: ['query_too_complex', 'query_timeout'],
    sql: 'SELECT id FROM c ORDER BY n, id LIMIT 1',
  },
  {
    name: "LIKE '%a%a%a%a%a%a%a%a%b' over 100 rows",
    text: "c (id < 101 AND v LIKE '%a%a%a%a%a%a%a%a%b') { id }",
    codes: [],
    sql: "SELECT id FROM c WHERE id < 101 AND v LIKE BINARY '%a%a%a%a%a%a%a%a%b' ORDER BY id",
  },
  {
    name: 'relation filter chain p.c.p.c.p.c from one row',
    text: 'c (id < 2 AND p.c.p.c.p.c.n = -1) { id }',
    codes: [],
    sql: RELATION_CHAIN_SQL,
  },
  {
    // The two shapes above match nothing; these prove the fast paths still find rows.
    name: "LIKE 'v%1%a' (matching) over 200 rows",
    text: "c (id < 201 AND v LIKE 'v%1%a') { id }",
    codes: [],
    sql: "SELECT id FROM c WHERE id < 201 AND v LIKE BINARY 'v%1%a' ORDER BY id",
  },
  {
    name: 'relation filter chain p.c.p.c.p.c (matching) from two rows',
    text: 'c (id < 3 AND p.c.p.c.p.c.n = 5) { id }',
    codes: [],
    sql: RELATION_CHAIN_SQL.replace('c1.id < 2', 'c1.id < 3').replace('c4.n = -1', 'c4.n = 5'),
  },
  {
    name: '2,400-term OR chain',
    text: `c (${repeatJoined(2400, (i) => `id = ${i + 1}`, ' OR ')}) { id }`,
    codes: ['query_too_complex', 'query_timeout'],
    sql: 'SELECT id FROM c WHERE id <= 2400 ORDER BY id LIMIT 1000',
  },
  {
    // The issue's 8 KB query: 4,000 one-letter keys.
    name: '4,000 ORDER BY keys',
    text: `c { id } ORDER BY ${repeatJoined(4000, () => 'n', ',')}`,
    codes: ['query_too_complex', 'query_timeout'],
    sql: 'SELECT id FROM c ORDER BY n, id LIMIT 1000',
  },
  {
    // 20,000 rows × a 36 KB picture (72 KB as hex) ≈ 1.4 GB of JSON, far over the 16 MiB
    // max_response_bytes: the only right answer is the refusal.
    name: 'pay { s { * } } LIMIT 20000 with 36 KB pictures',
    text: 'pay { s { * } } LIMIT 20000',
    codes: ['response_too_large'],
  },
];
