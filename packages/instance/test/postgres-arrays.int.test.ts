/** PostgreSQL arrays and character(n) served over HTTP, after the snapshot and after CDC. */
import type { TestDatabase } from '@replix/testkit';
import { testPostgres } from '@replix/testkit/vitest';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { json, startTestInstance, type TestInstance } from './instance-helpers.ts';
import { eventually } from './replication-harness.ts';

const COLUMNS = [
  'a_int int[]',
  'a_int8 bigint[]',
  'a_numeric numeric(30,10)[]',
  'a_text text[]',
  'a_bool boolean[]',
  'a_date date[]',
  'a_ts timestamptz[]',
  'a_bytea bytea[]',
  'a_grid int[][]',
  'a_char character(3)[]',
];

/** Row 1: every kind of element; the JSON text each column must be served as. */
const FULL: readonly [sql: string, served: string][] = [
  [`'{1,-2,NULL}'`, '[1,-2,null]'],
  [`'{9223372036854775807,-9223372036854775808}'`, '[9223372036854775807,-9223372036854775808]'],
  [`'{12345678901234567890.1234567891,0.5}'`, '[12345678901234567890.1234567891,0.5000000000]'],
  [
    String.raw`ARRAY['Trailers', 'Behind "the" Scenes', NULL, 'NULL', 'a,b', '{x}', 'back\slash', '', ' pad ']`,
    String.raw`["Trailers","Behind \"the\" Scenes",null,"NULL","a,b","{x}","back\\slash",""," pad "]`,
  ],
  [`'{t,f,NULL}'`, '[true,false,null]'],
  [`'{2024-02-29,NULL}'`, '["2024-02-29",null]'],
  [
    `ARRAY['2022-09-10 16:46:03.905795+00', '2024-01-01 02:00:00+02']::timestamptz[]`,
    '["2022-09-10T16:46:03.905795Z","2024-01-01T00:00:00.000000Z"]',
  ],
  [String.raw`ARRAY['\xdeadbeef'::bytea, ''::bytea, NULL]`, '["deadbeef","",null]'],
  [`'{{1,2},{3,NULL}}'`, '[[1,2],[3,null]]'],
  [`'{ab,"a "}'`, '["ab","a"]'],
];

const names = COLUMNS.map((column) => column.split(' ')[0]!);
const values = (id: number, sql: readonly string[]) => `(${id}, ${sql.join(', ')})`;
/** The served `data` text of rows, as `{"id":…,"a_int":…,…}` objects in order. */
const servedText = (rows: readonly (readonly [number, readonly string[]])[]) =>
  `[${rows
    .map(([id, json]) => `{"id":${id},${names.map((n, i) => `"${n}":${json[i]}`).join(',')}}`)
    .join(',')}]`;

const full = FULL.map(([, served]) => served);
const empty = names.map(() => '[]');
const nulls = names.map(() => 'null');

describe('PostgreSQL arrays and character(n), served', () => {
  let db: TestDatabase;
  let served: TestInstance;

  beforeAll(async () => {
    db = await testPostgres().createDatabase(`
      CREATE TABLE arrays (id int PRIMARY KEY, ${COLUMNS.join(', ')});
      INSERT INTO arrays VALUES ${values(
        1,
        FULL.map(([sql]) => sql),
      )}, ${values(
        2,
        names.map(() => `'{}'`),
      )}, ${values(
        3,
        names.map(() => 'NULL'),
      )};
      CREATE TABLE language (language_id int PRIMARY KEY, name character(20) NOT NULL);
      INSERT INTO language VALUES (1, 'English'), (2, 'Italian'), (3, 'Japanese');
    `);
    served = await startTestInstance(
      db.url,
      { sync: { mode: 'cdc', interval: 0.1 } },
      { replicationId: db.name },
    );
  });

  afterAll(async () => {
    await served?.close();
    await db?.drop();
  });

  async function dataText(query: string): Promise<string> {
    const response = await served.query(query);
    const body = await response.text();
    expect(response.status, body).toBe(200);
    return body.slice('{"data":'.length, body.indexOf(',"meta":'));
  }

  it('serves every element type as JSON after the snapshot, every digit kept', async () => {
    expect(await dataText('arrays { * } ORDER BY id')).toBe(
      servedText([
        [1, full],
        [2, empty],
        [3, nulls],
      ]),
    );
  });

  it('serves CDC inserts and updates exactly as the snapshot does', async () => {
    await db.exec(`
      INSERT INTO arrays VALUES ${values(
        4,
        FULL.map(([sql]) => sql),
      )};
      UPDATE arrays SET a_text = '{"x y",NULL,"NULL"}', a_grid = '{{5},{6}}', a_int = NULL
        WHERE id = 2;
      UPDATE arrays SET a_bool = '{}' WHERE id = 3;
    `);
    const updated = [...empty];
    updated[0] = 'null';
    updated[3] = '["x y",null,"NULL"]';
    updated[8] = '[[5],[6]]';
    const three = [...nulls];
    three[4] = '[]';
    await eventually(async () => {
      expect(await dataText('arrays { * } ORDER BY id')).toBe(
        servedText([
          [1, full],
          [2, updated],
          [3, three],
          [4, full],
        ]),
      );
    });
  });

  it('tests arrays for NULL and refuses anything else', async () => {
    expect(await dataText('arrays (a_grid IS NULL) { id }')).toBe('[{"id":3}]');
    expect(await dataText('arrays (a_text IS NOT NULL) { id } ORDER BY id')).toBe(
      '[{"id":1},{"id":2},{"id":4}]',
    );
    const refused = await served.query("arrays (a_text = '[]') { id }");
    expect(refused.status).toBe(400);
    expect((await json(refused)).error.code).toBe('executor_error');
  });

  it('describes array columns in /schema and /openapi.json', async () => {
    const headers = { Authorization: `Bearer ${served.key}` };
    const schema = await json(fetch(`${served.url}/schema`, { headers }));
    const table = schema.tables.find((t: { name: string }) => t.name === 'arrays');
    expect(table.columns.find((c: { name: string }) => c.name === 'a_int8')).toEqual({
      name: 'a_int8',
      type: 'array',
      elementType: 'bigint',
      nullable: true,
      sourceType: 'bigint[]',
    });
    const openapi = await json(fetch(`${served.url}/openapi.json`, { headers }));
    expect(openapi.components.schemas.arrays.properties.a_ts).toMatchObject({
      type: ['array', 'null'],
      items: { type: ['string', 'array', 'null'], format: 'date-time' },
    });
  });

  it('compares character(n) as PostgreSQL does: without the padding', async () => {
    expect(await dataText("language (name = 'English') { language_id name }")).toBe(
      '[{"language_id":1,"name":"English"}]',
    );
    expect(await dataText("language (name LIKE '%n') { language_id }")).toBe('[{"language_id":2}]');
    expect(await dataText('language { name } ORDER BY name DESC LIMIT 1')).toBe(
      '[{"name":"Japanese"}]',
    );
    await db.exec(
      "INSERT INTO language VALUES (4, 'French'); UPDATE language SET name = 'German' WHERE language_id = 2",
    );
    await eventually(async () => {
      expect(await dataText("language (name IN ('French', 'German')) { language_id }")).toBe(
        '[{"language_id":2},{"language_id":4}]',
      );
    });
    const sql = await db.query<{ n: string }>(
      "SELECT count(*)::text AS n FROM language WHERE name IN ('French', 'German')",
    );
    expect(sql[0]?.n).toBe('2');
  });
});
