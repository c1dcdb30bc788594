/**
 * JSON paths served by an instance against the source's own JSON functions (issue 32): MariaDB's
 * `JSON_EXTRACT`/`JSON_TYPE` on a `JSON` column, PostgreSQL's `->`/`->>`/`jsonb_typeof` on
 * `jsonb` and `json` columns, over seeded random documents (numbers, numbers written as text,
 * JSON nulls, missing keys, nested objects, arrays, Unicode). The SQL spells out the documented
 * rule (a comparison matches only a value of its literal's type; missing and null are NULL), and
 * each random filter's matching ids, each selected value and a numeric sort must agree.
 */
import { mulberry32 } from '@replix/testkit/mulberry32';
import { testMariaDb, testPostgres } from '@replix/testkit/vitest';
import { afterAll, describe, expect, it } from 'vitest';
import { startTestInstance, type TestInstance } from './instance-helpers.ts';

const random = mulberry32(3233);
const pick = (n: number) => Math.floor(random() * n);
const ROWS = 200;
const FILTERS = 60;
const TEXTS = ['a', 'B', 'é', 'Zoë', '😀', 'a b', "it's", ''];

/** A random value of the key `n`: mostly numbers, sometimes text, null or missing. */
function numberish(): unknown {
  switch (pick(8)) {
    case 0:
      return undefined;
    case 1:
      return null;
    case 2:
      return String(pick(10));
    case 3:
      return pick(100) / 4;
    default:
      return pick(20) - 5;
  }
}

function document(): string | null {
  if (pick(15) === 0) return null;
  const doc: Record<string, unknown> = {};
  const set = (key: string, value: unknown) => {
    if (value !== undefined) doc[key] = value;
  };
  set('n', numberish());
  set('s', pick(6) === 0 ? pick(5) : pick(8) === 0 ? undefined : TEXTS[pick(TEXTS.length)]);
  set('a', pick(4) === 0 ? 'flat' : { b: numberish(), c: TEXTS[pick(TEXTS.length)] });
  set('arr', pick(5) === 0 ? undefined : Array.from({ length: pick(4) }, () => pick(6)));
  set('f', pick(3) === 0 ? pick(2) === 0 : undefined);
  return JSON.stringify(doc);
}

/** The source's spelling of the documented rule, for one path. */
interface JsonDialect {
  /** The path's JSON value, NULL when missing. */
  readonly at: (path: readonly (string | number)[]) => string;
  /** The path's JSON value as JSON text, NULL when missing (what a select compares). */
  readonly json: (path: readonly (string | number)[]) => string;
  /** Its JSON type, lowercase: `number`, `string`, `boolean`, `null`, `object`, `array`. */
  readonly type: (path: readonly (string | number)[]) => string;
  /** Its value as a number (only read where the type is `number`). */
  readonly number: (path: readonly (string | number)[]) => string;
  /** Its value as text in code point order (only read where the type is `string`). */
  readonly text: (path: readonly (string | number)[]) => string;
}

const sqlText = (value: string) => `'${value.replaceAll("'", "''")}'`;
const queryPath = (path: readonly (string | number)[]) =>
  `doc${path.map((step) => (typeof step === 'number' ? `->${step}` : `->${sqlText(step)}`)).join('')}`;

/** A random filter in both languages. */
function randomFilter(sql: JsonDialect): { ours: string; theirs: string } {
  const numberPaths: (string | number)[][] = [['n'], ['a', 'b'], ['arr', 1]];
  const textPaths: (string | number)[][] = [['s'], ['a', 'c']];
  const isNull = (path: (string | number)[]) =>
    `(${sql.at(path)} IS NULL OR ${sql.type(path)} = 'null')`;
  const isNumber = (path: (string | number)[]) => `${sql.type(path)} = 'number'`;
  const isText = (path: (string | number)[]) => `${sql.type(path)} = 'string'`;
  const operators = ['=', '!=', '<', '<=', '>', '>='];
  switch (pick(7)) {
    case 0: {
      const path = numberPaths[pick(numberPaths.length)]!;
      const operator = operators[pick(operators.length)]!;
      const value = pick(20) - 5;
      return {
        ours: `${queryPath(path)} ${operator} ${value}`,
        theirs: `${isNumber(path)} AND ${sql.number(path)} ${operator === '!=' ? '<>' : operator} ${value}`,
      };
    }
    case 1: {
      const path = textPaths[pick(textPaths.length)]!;
      const operator = operators[pick(operators.length)]!;
      const value = TEXTS[pick(TEXTS.length)]!;
      return {
        ours: `${queryPath(path)} ${operator} ${sqlText(value)}`,
        theirs: `${isText(path)} AND ${sql.text(path)} ${operator === '!=' ? '<>' : operator} ${sqlText(value)}`,
      };
    }
    case 2: {
      const path = numberPaths[pick(numberPaths.length)]!;
      const values = [pick(10), pick(10) - 3];
      return {
        ours: `${queryPath(path)} IN (${values.join(', ')})`,
        theirs: `${isNumber(path)} AND ${sql.number(path)} IN (${values.join(', ')})`,
      };
    }
    case 3: {
      const path = [...numberPaths, ...textPaths, ['a'], ['f']][pick(7)]!;
      const negated = pick(2) === 0;
      return {
        ours: `${queryPath(path)} IS ${negated ? 'NOT ' : ''}NULL`,
        theirs: negated ? `NOT ${isNull(path)}` : isNull(path),
      };
    }
    case 4: {
      const path = textPaths[pick(textPaths.length)]!;
      const prefix = TEXTS[pick(TEXTS.length)]!.slice(0, 1).replace(/[%_\\]/g, '');
      return {
        ours: `${queryPath(path)} LIKE ${sqlText(`${prefix}%`)}`,
        theirs: `${isText(path)} AND ${sql.text(path)} LIKE ${sqlText(`${prefix}%`)}`,
      };
    }
    case 5: {
      const low = pick(10) - 5;
      const high = low + pick(8);
      return {
        ours: `doc->'n' BETWEEN ${low} AND ${high}`,
        theirs: `${isNumber(['n'])} AND ${sql.number(['n'])} BETWEEN ${low} AND ${high}`,
      };
    }
    default: {
      const wanted = pick(2) === 0;
      return {
        ours: `doc->'f' = ${wanted}`,
        theirs: `${sql.type(['f'])} = 'boolean' AND ${sql.text(['f'])} = '${wanted}'`,
      };
    }
  }
}

const docs = Array.from({ length: ROWS }, document);

async function compareWithSource(
  instance: TestInstance,
  query: <T>(text: string) => Promise<T[]>,
  sql: JsonDialect,
): Promise<number> {
  const ids = async (filter: string) => {
    const response = await instance.query(`t (${filter}) { id } ORDER BY id LIMIT 10000`);
    const body = await response.text();
    if (response.status !== 200) throw new Error(`${filter}: ${body}`);
    return (JSON.parse(body).data as { id: number }[]).map((row) => row.id);
  };
  const sourceIds = async (where: string) =>
    (await query<{ id: number | string }>(`SELECT id FROM t WHERE ${where} ORDER BY id`)).map(
      (row) => Number(row.id),
    );
  let compared = 0;
  let matchedSome = 0;
  for (let i = 0; i < FILTERS; i++) {
    const { ours, theirs } = randomFilter(sql);
    const expected = await sourceIds(theirs);
    expect(await ids(ours), `${ours}\n  vs ${theirs}`).toEqual(expected);
    if (expected.length > 0 && expected.length < ROWS) matchedSome++;
    compared++;
  }
  expect(matchedSome).toBeGreaterThan(FILTERS / 2);

  // Selected values: every row's nested value as the source extracts it.
  const response = await instance.query(
    "t { id doc->'a'->'c' doc->'arr'->0 doc->'n' } ORDER BY id",
  );
  const served = ((await response.json()) as { data: Record<string, unknown>[] }).data;
  const extracted = await query<Record<string, string | null>>(
    `SELECT id, ${sql.json(['a', 'c'])} AS c, ${sql.json(['arr', 0])} AS arr_0, ${sql.json(['n'])} AS n FROM t ORDER BY id`,
  );
  const parsed = (value: string | null) => (value === null ? null : JSON.parse(value));
  expect(served).toEqual(
    extracted.map((row) => ({
      id: Number(row.id),
      c: parsed(row.c ?? null),
      arr_0: parsed(row.arr_0 ?? null),
      n: parsed(row.n ?? null),
    })),
  );
  compared++;

  // ORDER BY a path holding numbers: the source's numeric order, missing and non-numbers
  // apart (numbers first, then text; NULLs last).
  const sorted = await ids("doc->'a'->'b' IS NOT NULL");
  const order = await instance.query(
    "t (doc->'a'->'b' IS NOT NULL) { id } ORDER BY doc->'a'->'b' DESC, id LIMIT 10000",
  );
  const byValue = ((await order.json()) as { data: { id: number }[] }).data.map((row) => row.id);
  const sourceOrder = await query<{ id: number | string }>(
    `SELECT id FROM t WHERE NOT (${sql.at(['a', 'b'])} IS NULL OR ${sql.type(['a', 'b'])} = 'null')
     ORDER BY CASE WHEN ${sql.type(['a', 'b'])} = 'string' THEN 0 ELSE 1 END,
       CASE WHEN ${sql.type(['a', 'b'])} = 'number' THEN ${sql.number(['a', 'b'])} END DESC,
       CASE WHEN ${sql.type(['a', 'b'])} = 'string' THEN ${sql.text(['a', 'b'])} END DESC, id`,
  );
  expect(byValue).toEqual(sourceOrder.map((row) => Number(row.id)));
  expect(byValue).toHaveLength(sorted.length);
  compared++;
  return compared;
}

const values = () =>
  docs.map((doc, id) => `(${id}, ${doc === null ? 'NULL' : sqlText(doc)})`).join(',\n');

describe('JSON paths against the sources', () => {
  const cleanups: (() => Promise<void>)[] = [];
  afterAll(async () => {
    for (const cleanup of cleanups.reverse()) await cleanup();
  });

  it('MariaDB JSON: the rows and values JSON_EXTRACT finds', async () => {
    const db = await testMariaDb().createDatabase(`
      CREATE TABLE t (id INT PRIMARY KEY, doc JSON);
      INSERT INTO t VALUES ${values()};
    `);
    cleanups.push(() => db.drop());
    const instance = await startTestInstance(db.url);
    cleanups.push(() => instance.close());
    const jsonPath = (path: readonly (string | number)[]) =>
      sqlText(
        `$${path.map((step) => (typeof step === 'number' ? `[${step}]` : `."${step}"`)).join('')}`,
      );
    const at = (path: readonly (string | number)[]) => `JSON_EXTRACT(doc, ${jsonPath(path)})`;
    const sql: JsonDialect = {
      at,
      json: (path) => `CAST(${at(path)} AS CHAR CHARACTER SET utf8mb4)`,
      type: (path) =>
        `(CASE JSON_TYPE(${at(path)}) WHEN 'INTEGER' THEN 'number' WHEN 'DOUBLE' THEN 'number' WHEN 'DECIMAL' THEN 'number' ELSE LOWER(JSON_TYPE(${at(path)})) END)`,
      number: (path) => `CAST(${at(path)} AS DOUBLE)`,
      text: (path) => `JSON_UNQUOTE(${at(path)}) COLLATE utf8mb4_bin`,
    };
    expect(await compareWithSource(instance, (text) => db.query(text), sql)).toBe(FILTERS + 2);
  }, 120_000);

  for (const type of ['jsonb', 'json'] as const) {
    it(`PostgreSQL ${type}: the rows and values ->, ->> and ${type}_typeof find`, async () => {
      const db = await testPostgres().createDatabase(`
        CREATE TABLE t (id int PRIMARY KEY, doc ${type});
        INSERT INTO t VALUES ${values()};
      `);
      cleanups.push(() => db.drop());
      const instance = await startTestInstance(db.url);
      cleanups.push(() => instance.close());
      const steps = (path: readonly (string | number)[]) =>
        path.map((step) => (typeof step === 'number' ? String(step) : sqlText(step)));
      const at = (path: readonly (string | number)[]) =>
        `(doc${steps(path)
          .map((step) => `->${step}`)
          .join('')})::text`;
      const last = (path: readonly (string | number)[]) => {
        const parts = steps(path);
        const head = parts
          .slice(0, -1)
          .map((step) => `->${step}`)
          .join('');
        return `(doc${head}->>${parts[parts.length - 1]})`;
      };
      const sql: JsonDialect = {
        at,
        json: at,
        type: (path) =>
          `${type}_typeof(doc${steps(path)
            .map((step) => `->${step}`)
            .join('')})`,
        number: (path) => `${last(path)}::numeric`,
        text: (path) => `${last(path)} COLLATE "C"`,
      };
      expect(await compareWithSource(instance, (text) => db.query(text), sql)).toBe(FILTERS + 2);
    }, 120_000);
  }
});
