/**
 * CONTAINS, CONTAINED BY, OVERLAPS and CARDINALITY on PostgreSQL arrays served by an instance,
 * against PostgreSQL's own `@>`, `<@`, `&&` and `cardinality` (issue 32), over seeded random
 * arrays of integers, text, DECIMALs past a double's digits, dates and two dimensions, with NULL
 * arrays, NULL elements, empty arrays and repeats. Each random query's matching ids must be the
 * ids the SQL finds.
 */
import { mulberry32 } from '@replix/testkit/mulberry32';
import { testPostgres } from '@replix/testkit/vitest';
import { afterAll, describe, expect, it } from 'vitest';
import { startTestInstance } from './instance-helpers.ts';

const random = mulberry32(3232);
const pick = (n: number) => Math.floor(random() * n);
const ROWS = 240;
const QUERIES_PER_COLUMN = 30;

interface ArrayColumn {
  readonly name: string;
  readonly sqlType: string;
  /** One element as a literal of both languages (the query's and SQL's), or NULL. */
  readonly element: () => string;
  /** The array literal's SQL cast, for the operators' right side. */
  readonly cast: string;
  readonly dimensions?: 2;
}

const WORDS = ["'a'", "'b'", "'Trailers'", "'é'", "'É'", "'😀'", "'x y'", "''"];
const NEAR = '12345678901234567890.01234567';
const COLUMNS: ArrayColumn[] = [
  { name: 'ints', sqlType: 'int[]', element: () => String(pick(8) - 2), cast: 'int[]' },
  { name: 'words', sqlType: 'text[]', element: () => WORDS[pick(WORDS.length)]!, cast: 'text[]' },
  {
    name: 'amounts',
    sqlType: 'numeric(30,10)[]',
    element: () => `${NEAR}${pick(4)}0`,
    cast: 'numeric[]',
  },
  {
    name: 'days',
    sqlType: 'date[]',
    element: () => `'2024-01-0${1 + pick(5)}'`,
    cast: 'date[]',
  },
  { name: 'grid', sqlType: 'int[]', element: () => String(pick(6)), cast: 'int[]', dimensions: 2 },
];

/** A random array value as SQL, NULL sometimes, with NULL elements sometimes. */
function arraySql(column: ArrayColumn): string {
  if (pick(10) === 0) return 'NULL';
  const element = () => (pick(8) === 0 ? 'NULL' : column.element());
  if (column.dimensions === 2) {
    const width = 1 + pick(2);
    const rows = Array.from(
      { length: 1 + pick(2) },
      () => `ARRAY[${Array.from({ length: width }, element).join(', ')}]`,
    );
    return `ARRAY[${rows.join(', ')}]::${column.sqlType}`;
  }
  const length = pick(5);
  return `ARRAY[${Array.from({ length }, element).join(', ')}]::${column.sqlType}`;
}

describe('array operators against PostgreSQL', () => {
  const cleanups: (() => Promise<void>)[] = [];
  afterAll(async () => {
    for (const cleanup of cleanups.reverse()) await cleanup();
  });

  it('match the rows @>, <@, && and cardinality match', async () => {
    const rows = Array.from(
      { length: ROWS },
      (_, id) => `(${id}, ${COLUMNS.map((column) => arraySql(column)).join(', ')})`,
    );
    const db = await testPostgres().createDatabase(`
      CREATE TABLE t (id int PRIMARY KEY, ${COLUMNS.map((c) => `${c.name} ${c.sqlType}`).join(', ')});
      INSERT INTO t VALUES ${rows.join(',\n')};
    `);
    cleanups.push(() => db.drop());
    const instance = await startTestInstance(db.url);
    cleanups.push(() => instance.close());

    const servedIds = async (filter: string) => {
      const response = await instance.query(`t (${filter}) { id } ORDER BY id LIMIT 10000`);
      const body = await response.text();
      if (response.status !== 200) throw new Error(`${filter}: ${body}`);
      return (JSON.parse(body).data as { id: number }[]).map((row) => row.id);
    };
    const sqlIds = async (where: string) =>
      (await db.query<{ id: number }>(`SELECT id FROM t WHERE ${where} ORDER BY id`)).map((row) =>
        Number(row.id),
      );

    let compared = 0;
    let matchedSome = 0;
    const operators = [
      ['CONTAINS', '@>'],
      ['CONTAINED BY', '<@'],
      ['OVERLAPS', '&&'],
    ] as const;
    for (const column of COLUMNS) {
      for (let q = 0; q < QUERIES_PER_COLUMN; q++) {
        const [ours, theirs] = operators[q % operators.length]!;
        const list = Array.from({ length: 1 + pick(3) }, () =>
          pick(12) === 0 ? 'NULL' : column.element(),
        );
        const mine = await servedIds(`${column.name} ${ours} (${list.join(', ')})`);
        const expected = await sqlIds(
          `${column.name} ${theirs} ARRAY[${list.join(', ')}]::${column.cast}`,
        );
        expect(mine, `${column.name} ${ours} (${list.join(', ')})`).toEqual(expected);
        compared++;
        if (expected.length > 0) matchedSome++;
      }
      const size = pick(4);
      for (const [ours, theirs] of [
        [`CARDINALITY(${column.name}) = ${size}`, `cardinality(${column.name}) = ${size}`],
        [
          `CARDINALITY(${column.name}) BETWEEN 1 AND 3`,
          `cardinality(${column.name}) BETWEEN 1 AND 3`,
        ],
        [`CARDINALITY(${column.name}) IS NULL`, `cardinality(${column.name}) IS NULL`],
      ] as const) {
        expect(await servedIds(ours), ours).toEqual(await sqlIds(theirs));
        compared++;
      }
    }
    // The random lists reach rows, so the comparisons are not all of empty answers.
    expect(matchedSome).toBeGreaterThan(COLUMNS.length * 10);
    expect(compared).toBe(COLUMNS.length * (QUERIES_PER_COLUMN + 3));
  }, 120_000);
});
