/**
 * MIN, MAX, COUNT(DISTINCT), HAVING and ORDER BY an aggregate served by an instance against the
 * same SQL run by MariaDB and PostgreSQL (issue 32), over seeded random data: NULLs, ties,
 * DECIMAL(38,10) values that differ only past a double's digits, Unicode text (compared in code
 * point order: MariaDB's `utf8mb4_bin`, PostgreSQL's `COLLATE "C"`), dates. Numbers are read as
 * the answer's JSON text, so every digit counts.
 */

import type { TestDatabase } from '@replix/testkit';
import { mulberry32 } from '@replix/testkit/mulberry32';
import { testMariaDb, testPostgres } from '@replix/testkit/vitest';
import { afterAll, describe, expect, it } from 'vitest';
import { startTestInstance, type TestInstance } from './instance-helpers.ts';

const random = mulberry32(32);
const pick = (n: number) => Math.floor(random() * n);
const ROWS = 360;
/** Group 9 has rows whose every `d` is NULL, so MIN and MAX of it are NULL. */
const GROUPS = [0, 1, 2, 3, 4, 5, 9, null];

/** Values sharing their first 18 digits: a double cannot tell them apart. */
const NEAR = '123456789012345678.01234567';
const TEXTS = ['a', 'A', 'b', 'ab', 'é', 'É', 'e\u0301', 'ß', 'Σ', 'σ', 'ж', '😀', 'z', 'Zoë', ''];

function decimal(): string {
  switch (pick(3)) {
    case 0:
      return `${NEAR}${String(pick(100)).padStart(2, '0')}`;
    case 1:
      return `-${pick(1000)}.${String(pick(10_000_000_000)).padStart(10, '0')}`;
    default:
      return `${pick(20)}.5000000000`;
  }
}

interface Row {
  readonly id: number;
  readonly g: number | null;
  readonly d: string | null;
  readonly i: number | null;
  readonly s: string | null;
  readonly dt: string | null;
}

const rows: Row[] = Array.from({ length: ROWS }, (_, id) => {
  const g = GROUPS[pick(GROUPS.length)] ?? null;
  const day = 1 + pick(28);
  const month = 1 + pick(12);
  return {
    id,
    g,
    d: g === 9 || pick(8) === 0 ? null : decimal(),
    i: pick(8) === 0 ? null : pick(101) - 50,
    s: pick(8) === 0 ? null : (TEXTS[pick(TEXTS.length)] as string),
    dt:
      pick(8) === 0
        ? null
        : `2024-${String(month).padStart(2, '0')}-${String(day).padStart(2, '0')}`,
  };
});

const literal = (value: string | number | null, quoted: boolean) =>
  value === null ? 'NULL' : quoted ? `'${String(value).replaceAll("'", "''")}'` : String(value);

function insertSql(): string {
  const parents = [0, 1, 2, 3, 4, 5, 6, 9].map((id) => `(${id})`).join(', ');
  const values = rows.map(
    (row) =>
      `(${row.id}, ${literal(row.g, false)}, ${literal(row.d, false)}, ${literal(row.i, false)}, ` +
      `${literal(row.s, true)}, ${literal(row.dt, true)})`,
  );
  return `INSERT INTO p (id) VALUES ${parents};
    INSERT INTO t (id, g, d, i, s, dt) VALUES ${values.join(',\n')};`;
}

/** The answer's rows, every number as its JSON source text. */
async function served(instance: TestInstance, text: string): Promise<Record<string, unknown>[]> {
  const response = await instance.query(text);
  const body = await response.text();
  if (response.status !== 200) throw new Error(`${text}: ${body}`);
  return JSON.parse(body, (_key, value, context?: { source?: string }) =>
    typeof value === 'number' ? context?.source : value,
  ).data;
}

type SourceRow = Record<string, string | number | null>;

/** How one source writes what differs between the two: text casts and code point order. */
interface Dialect {
  readonly text: (expression: string) => string;
  readonly bytewise: (column: string) => string;
}

/** Each row's values as text (NULL as null), sorted by `g` as text: one form for both sides. */
function canonical(list: readonly Record<string, unknown>[]): Record<string, string | null>[] {
  return list
    .map((row) =>
      Object.fromEntries(
        Object.entries(row).map(([key, value]) => [key, value === null ? null : String(value)]),
      ),
    )
    .sort((a, b) => String(a.g).localeCompare(String(b.g)));
}

async function compareWithSource(
  instance: TestInstance,
  sql: (text: string) => Promise<SourceRow[]>,
  dialect: Dialect,
): Promise<number> {
  const { text, bytewise } = dialect;
  let compared = 0;
  const same = async (query: string, sourceSql: string) => {
    const mine = canonical(await served(instance, query));
    const theirs = canonical(await sql(sourceSql));
    expect(mine, query).toEqual(theirs);
    compared++;
    return mine;
  };

  // Every new aggregate over every type, per group.
  const grouped = await same(
    't { g MIN(d) MAX(d) MIN(i) MAX(i) MIN(s) MAX(s) MIN(dt) MAX(dt) COUNT(DISTINCT d) COUNT(DISTINCT s) COUNT(DISTINCT i) COUNT(*) }',
    `SELECT ${text('g')} AS g, ${text('MIN(d)')} AS min_d, ${text('MAX(d)')} AS max_d,
       ${text('MIN(i)')} AS min_i, ${text('MAX(i)')} AS max_i,
       MIN(${bytewise('s')}) AS min_s, MAX(${bytewise('s')}) AS max_s,
       ${text('MIN(dt)')} AS min_dt, ${text('MAX(dt)')} AS max_dt,
       ${text('COUNT(DISTINCT d)')} AS count_distinct_d, ${text(`COUNT(DISTINCT ${bytewise('s')})`)} AS count_distinct_s,
       ${text('COUNT(DISTINCT i)')} AS count_distinct_i, ${text('COUNT(*)')} AS count
     FROM t GROUP BY g`,
  );
  // The data reaches what the test is about: near-equal DECIMALs and an all-NULL group.
  expect(grouped.some((row) => row.max_d?.startsWith(NEAR))).toBe(true);
  expect(grouped.find((row) => row.g === '9')?.min_d).toBeNull();

  // Over everything, and inside a to-many relation (one row per parent, even without children).
  await same(
    't { MIN(d) MAX(s) COUNT(DISTINCT dt) }',
    `SELECT ${text('MIN(d)')} AS min_d, MAX(${bytewise('s')}) AS max_s,
       ${text('COUNT(DISTINCT dt)')} AS count_distinct_dt FROM t`,
  );
  const nested = await served(instance, 'p { id t { MAX(d) COUNT(DISTINCT s) } }');
  const perParent = new Map(grouped.map((row) => [row.g, row]));
  for (const parent of nested) {
    const [inner] = parent.t as Record<string, unknown>[];
    const expected = perParent.get(String(parent.id));
    expect(inner?.max_d ?? null, `p ${parent.id}`).toBe(expected?.max_d ?? null);
    expect(String(inner?.count_distinct_s), `p ${parent.id}`).toBe(
      expected?.count_distinct_s ?? '0',
    );
  }
  compared++;

  // HAVING: numbers, exact decimals at a value between two near-equal ones, text, dates, NULLs.
  const counts = grouped.map((row) => Number(row.count)).sort((a, b) => a - b);
  const middle = counts[Math.floor(counts.length / 2)] as number;
  await same(
    `t { g COUNT(*) COUNT(DISTINCT s) MAX(i) } HAVING count > ${middle} AND count_distinct_s >= 2 OR MAX(i) < 45`,
    `SELECT ${text('g')} AS g, ${text('COUNT(*)')} AS count,
       ${text(`COUNT(DISTINCT ${bytewise('s')})`)} AS count_distinct_s, ${text('MAX(i)')} AS max_i
     FROM t GROUP BY g HAVING COUNT(*) > ${middle} AND COUNT(DISTINCT ${bytewise('s')}) >= 2 OR MAX(i) < 45`,
  );
  await same(
    `t { g COUNT(*) } HAVING count IN (${counts.slice(0, 3).join(', ')})`,
    `SELECT ${text('g')} AS g, ${text('COUNT(*)')} AS count FROM t GROUP BY g
     HAVING COUNT(*) IN (${counts.slice(0, 3).join(', ')})`,
  );
  const between = `${NEAR}30`;
  await same(
    `t { g MAX(d) } HAVING max_d >= ${between} OR max_d IS NULL`,
    `SELECT ${text('g')} AS g, ${text('MAX(d)')} AS max_d FROM t GROUP BY g
     HAVING MAX(d) >= ${between} OR MAX(d) IS NULL`,
  );
  const sums = await sql(`SELECT ${text('SUM(d)')} AS s FROM t GROUP BY g`);
  const sumTexts = sums.map((row) => row.s).filter((sum): sum is string => sum !== null);
  const sumLiteral = `${sumTexts[0]}1`;
  await same(
    `t { g SUM(d) } HAVING SUM(d) < ${sumLiteral}`,
    `SELECT ${text('g')} AS g, ${text('SUM(d)')} AS sum_d FROM t GROUP BY g HAVING SUM(d) < ${sumLiteral}`,
  );
  await same(
    "t { g MIN(s) MAX(dt) } HAVING min_s LIKE '%' AND max_dt BETWEEN '2024-03-01' AND '2024-12-28'",
    `SELECT ${text('g')} AS g, MIN(${bytewise('s')}) AS min_s, ${text('MAX(dt)')} AS max_dt
     FROM t GROUP BY g HAVING MIN(${bytewise('s')}) LIKE '%' AND MAX(dt) BETWEEN '2024-03-01' AND '2024-12-28'`,
  );
  await same(
    't { COUNT(*) } HAVING count > 100000',
    `SELECT ${text('COUNT(*)')} AS count FROM t HAVING COUNT(*) > 100000`,
  );

  // ORDER BY an aggregate, by call: the source's order of values (ties may differ in group).
  const ordered = await served(
    instance,
    't { g COUNT(DISTINCT i) } ORDER BY COUNT(DISTINCT i) DESC LIMIT 4',
  );
  const sourceOrder = await sql(
    `SELECT ${text('COUNT(DISTINCT i)')} AS c FROM t GROUP BY g ORDER BY COUNT(DISTINCT i) DESC LIMIT 4`,
  );
  expect(ordered.map((row) => String(row.count_distinct_i))).toEqual(
    sourceOrder.map((row) => String(row.c)),
  );
  compared++;
  return compared;
}

describe('MIN, MAX, COUNT(DISTINCT) and HAVING against the sources', () => {
  const cleanups: (() => Promise<void>)[] = [];
  afterAll(async () => {
    for (const cleanup of cleanups.reverse()) await cleanup();
  });

  /** Serves `db` from an instance and compares it with the database's own SQL. */
  async function compareOn(db: TestDatabase, dialect: Dialect): Promise<number> {
    cleanups.push(() => db.drop());
    const instance = await startTestInstance(db.url);
    cleanups.push(() => instance.close());
    return compareWithSource(instance, (text) => db.query<SourceRow>(text), dialect);
  }

  it('MariaDB: the same groups and values as its SQL', async () => {
    const db = await testMariaDb().createDatabase(`
      CREATE TABLE p (id INT PRIMARY KEY);
      CREATE TABLE t (id INT PRIMARY KEY, g INT REFERENCES p(id), d DECIMAL(38,10), i INT,
        s VARCHAR(20) CHARACTER SET utf8mb4 COLLATE utf8mb4_bin, dt DATE);
      ${insertSql()}
    `);
    const dialect: Dialect = {
      text: (expression) => `CAST(${expression} AS CHAR)`,
      bytewise: (column) => column,
    };
    expect(await compareOn(db, dialect)).toBe(10);
  }, 60_000);

  it('PostgreSQL: the same groups and values as its SQL', async () => {
    const db = await testPostgres().createDatabase(`
      CREATE TABLE p (id int PRIMARY KEY);
      CREATE TABLE t (id int PRIMARY KEY, g int REFERENCES p(id), d numeric(38,10), i int,
        s text, dt date);
      ${insertSql()}
    `);
    const dialect: Dialect = {
      text: (expression) => `(${expression})::text`,
      bytewise: (column) => `${column} COLLATE "C"`,
    };
    expect(await compareOn(db, dialect)).toBe(10);
  }, 60_000);
});
