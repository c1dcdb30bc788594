/**
 * Timestamps and times to the microsecond against the real servers (issue 13, point 3): the
 * served text equals the source's, filters and ORDER BY on microsecond differences agree with
 * SQL, after the snapshot and after CDC and poll-mode changes.
 */
import type { TestDatabase } from '@replix/testkit';
import { testMariaDb, testPostgres } from '@replix/testkit/vitest';
import { describe, expect, it } from 'vitest';
import { startTestInstance, type TestInstance } from './instance-helpers.ts';
import { eventually } from './replication-harness.ts';

interface EngineCase {
  readonly engine: 'mariadb' | 'postgres';
  readonly admin: () => ReturnType<typeof testMariaDb>;
  readonly ddl: string;
  /** Timestamp columns (served as ISO text) with their digits, time columns (seconds). */
  readonly timestamps: readonly { readonly name: string; readonly digits: 3 | 6 }[];
  readonly times: readonly string[];
  /** SQL that prints a timestamp column as the ISO text Replix serves for `digits`. */
  readonly isoSql: (column: string, digits: 3 | 6) => string;
  /** SQL that gives a time column as exact seconds with their fraction (a DECIMAL). */
  readonly secondsSql: (column: string) => string;
  readonly rows: readonly string[];
  readonly insert: string;
  readonly update: string;
}

const MARIADB: EngineCase = {
  engine: 'mariadb',
  admin: testMariaDb,
  ddl: `CREATE TABLE t (id INT PRIMARY KEY, a DATETIME(6), b TIMESTAMP(6) NULL, c TIME(6),
    d DATETIME(3), e DATETIME, f DATETIME(4))`,
  timestamps: [
    { name: 'a', digits: 6 },
    { name: 'b', digits: 6 },
    { name: 'd', digits: 3 },
    { name: 'e', digits: 3 },
    { name: 'f', digits: 6 },
  ],
  times: ['c'],
  isoSql: (name, digits) => {
    // TIMESTAMP prints in the session's zone; Replix reads it in UTC.
    const column = name === 'b' ? `CONVERT_TZ(b, @@session.time_zone, '+00:00')` : name;
    return digits === 6
      ? `DATE_FORMAT(${column}, '%Y-%m-%dT%H:%i:%s.%fZ')`
      : `CONCAT(DATE_FORMAT(${column}, '%Y-%m-%dT%H:%i:%s.'), LEFT(DATE_FORMAT(${column}, '%f'), 3), 'Z')`;
  },
  secondsSql: (column) => `TIME_TO_SEC(${column})`,
  rows: [
    `(1, '2022-09-10 16:46:03.905795', '2022-09-10 16:46:03.905795', '23:59:59.999999', '2022-09-10 16:46:03.905', '2022-09-10 16:46:03', '2022-09-10 16:46:03.9057')`,
    `(2, '2022-09-10 16:46:03.905796', '2022-09-10 16:46:03.905796', '-838:59:59.000001', '2022-09-10 16:46:03.906', '2022-09-10 16:46:04', '2022-09-10 16:46:03.9058')`,
    `(3, '1969-12-31 23:59:59.999999', '1970-01-01 00:00:01.000001', '00:00:00.000001', '1969-12-31 23:59:59.999', '1969-12-31 23:59:59', '1969-12-31 23:59:59.9999')`,
    `(4, '2024-02-29 23:59:59.999999', NULL, '12:34:56.5', NULL, '2024-02-29 00:00:00', NULL)`,
  ],
  insert: `INSERT INTO t VALUES (5, '2022-09-10 16:46:03.905794', '2038-01-19 03:14:07.999999', '838:59:59.999999', '2000-01-01 00:00:00.001', '2000-01-01 00:00:00', '2000-01-01 00:00:00.0001')`,
  update: `UPDATE t SET a = '2022-09-10 16:46:03.905797', b = '2001-02-03 04:05:06.000007', c = '-00:00:00.000001' WHERE id = 1`,
};

const POSTGRES: EngineCase = {
  engine: 'postgres',
  admin: testPostgres,
  ddl: `CREATE TABLE t (id int PRIMARY KEY, a timestamp, b timestamptz, c time(6), d timestamp(3),
    e timestamp(0), f timetz)`,
  timestamps: [
    { name: 'a', digits: 6 },
    { name: 'b', digits: 6 },
    { name: 'd', digits: 3 },
    { name: 'e', digits: 3 },
  ],
  times: ['c', 'f'],
  isoSql: (column, digits) => {
    const utc = column === 'b' ? `(${column} AT TIME ZONE 'UTC')` : column;
    return `to_char(${utc}, 'YYYY-MM-DD"T"HH24:MI:SS.${digits === 6 ? 'US' : 'MS'}"Z"')`;
  },
  secondsSql: (column) =>
    column === 'f'
      ? `extract(epoch from (${column} AT TIME ZONE 'UTC')::time)`
      : `extract(epoch from ${column})`,
  rows: [
    `(1, '2022-09-10 16:46:03.905795', '2022-09-10 16:46:03.905795+00', '23:59:59.999999', '2022-09-10 16:46:03.905', '2022-09-10 16:46:03', '10:00:00.000001+05:30')`,
    `(2, '2022-09-10 16:46:03.905796', '2022-09-10 18:46:03.905796+02', '00:00:00', '2022-09-10 16:46:03.906', '2022-09-10 16:46:04', '23:59:59.999999-01')`,
    `(3, '1969-12-31 23:59:59.999999', '1969-12-31 23:59:59.999999-00:30', '00:00:00.000001', '1969-12-31 23:59:59.999', '1969-12-31 23:59:59', '00:00:00+00')`,
    `(4, '2024-02-29 23:59:59.999999', NULL, '12:34:56.5', NULL, '2024-02-29 00:00:00', NULL)`,
  ],
  insert: `INSERT INTO t VALUES (5, '2022-09-10 16:46:03.905794', '2038-01-19 03:14:07.999999+00', '23:59:59.999998', '2000-01-01 00:00:00.001', '2000-01-01 00:00:00', '12:00:00.5+00')`,
  update: `UPDATE t SET a = '2022-09-10 16:46:03.905797', b = '2001-02-03 04:05:06.000007+00', c = '00:00:00.000002' WHERE id = 1`,
};

type Row = Record<string, unknown>;

/** Every row of `t` as the source prints it, in the served shape. */
async function sourceTable(db: TestDatabase, spec: EngineCase): Promise<Row[]> {
  const columns = [
    'id',
    ...spec.timestamps.map(({ name, digits }) => `${spec.isoSql(name, digits)} AS ${name}`),
    ...spec.times.map((name) => `${spec.secondsSql(name)} AS ${name}`),
  ];
  const rows = await db.query<Row>(`SELECT ${columns.join(', ')} FROM t ORDER BY id`);
  return rows.map((row) => {
    const shaped: Row = { id: Number(row.id) };
    for (const { name } of spec.timestamps) shaped[name] = row[name] ?? null;
    for (const name of spec.times) shaped[name] = row[name] === null ? null : Number(row[name]);
    return shaped;
  });
}

async function servedTable(served: TestInstance, spec: EngineCase): Promise<Row[]> {
  const fields = ['id', ...spec.timestamps.map((c) => c.name), ...spec.times].join(' ');
  return (await served.json(`t { ${fields} } ORDER BY id`)).data;
}

/** The ids SQL and Replix find for a filter on `a`, and their order by `a`. */
async function expectSameIds(db: TestDatabase, served: TestInstance, spec: EngineCase) {
  const literals = [
    '2022-09-10 16:46:03.905795',
    '2022-09-10 16:46:03.905796',
    '1969-12-31 23:59:59.999999',
  ];
  const iso = (text: string) => `${text.replace(' ', 'T')}Z`;
  const ids = async (sql: string) =>
    (await db.query<{ id: number }>(`SELECT id FROM t WHERE ${sql} ORDER BY id`)).map((r) =>
      Number(r.id),
    );
  const servedIds = async (filter: string) =>
    (await served.json(`t (${filter}) { id } ORDER BY id`)).data.map((r) => r.id);
  for (const literal of literals) {
    for (const op of ['=', '<', '<=', '>', '>=', '!=']) {
      expect(await servedIds(`a ${op} '${iso(literal)}'`), `a ${op} ${literal}`).toEqual(
        await ids(`a ${op} '${literal}'`),
      );
    }
  }
  const [low, high] = [literals[0]!, literals[1]!];
  expect(await servedIds(`a BETWEEN '${iso(low)}' AND '${iso(high)}'`)).toEqual(
    await ids(`a BETWEEN '${low}' AND '${high}'`),
  );
  expect(await servedIds(`a IN ('${iso(high)}', '${iso(literals[2]!)}')`)).toEqual(
    await ids(`a IN ('${high}', '${literals[2]}')`),
  );
  expect(await servedIds('c > 86399.999998')).toEqual(
    await ids(`${spec.secondsSql('c')} > 86399.999998`),
  );
  for (const column of ['a', 'b', 'c']) {
    const sqlOrder = (
      await db.query<{ id: number }>(
        `SELECT id FROM t WHERE ${column} IS NOT NULL ORDER BY ${column} DESC, id`,
      )
    ).map((r) => Number(r.id));
    const servedOrder = (
      await served.json(`t (${column} IS NOT NULL) { id } ORDER BY ${column} DESC, id`)
    ).data.map((r) => r.id);
    expect(servedOrder, `ORDER BY ${column}`).toEqual(sqlOrder);
  }
}

describe.each([MARIADB, POSTGRES])('microsecond temporal values from $engine', (spec) => {
  it('serves the source text exactly after the snapshot and after CDC inserts and updates', {
    timeout: 60_000,
  }, async () => {
    const db = await spec.admin().createDatabase(spec.ddl);
    await db.exec(`INSERT INTO t VALUES ${spec.rows.join(', ')}`);
    const served = await startTestInstance(
      db.url,
      { tables: [{ name: 't' }], sync: { mode: 'cdc', interval: 0.1 } },
      { replicationId: db.name },
    );
    try {
      const loaded = await servedTable(served, spec);
      expect(loaded).toEqual(await sourceTable(db, spec));
      expect(loaded[0]!.a).toBe('2022-09-10T16:46:03.905795Z');
      await expectSameIds(db, served, spec);

      await db.exec(spec.insert);
      await db.exec(spec.update);
      await eventually(async () =>
        expect(await servedTable(served, spec)).toEqual(await sourceTable(db, spec)),
      );
      expect((await servedTable(served, spec))[0]!.a).toBe('2022-09-10T16:46:03.905797Z');
      await expectSameIds(db, served, spec);
    } finally {
      await served.close();
      await db.drop();
    }
  });

  it('polls by a microsecond change column without missing or repeating a row', {
    timeout: 60_000,
  }, async () => {
    const db = await spec.admin().createDatabase(spec.ddl);
    await db.exec(`INSERT INTO t VALUES ${spec.rows.join(', ')}`);
    const served = await startTestInstance(db.url, {
      tables: [{ name: 't' }],
      sync: { mode: 'poll', interval: 0.2, change_column: 'a' },
    });
    try {
      // One microsecond above the largest `a` loaded (row 4, 2024-02-29 23:59:59.999999).
      await db.exec(spec.insert.replace('2022-09-10 16:46:03.905794', '2024-03-01 00:00:00'));
      await eventually(async () =>
        expect(await servedTable(served, spec)).toEqual(await sourceTable(db, spec)),
      );
      expect(await servedTable(served, spec)).toHaveLength(5);
    } finally {
      await served.close();
      await db.drop();
    }
  });
});
