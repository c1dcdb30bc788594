import type { SourceTable } from '@replix/engine';
import type { TestDatabase } from '@replix/testkit';
import { testPostgres } from '@replix/testkit/vitest';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import type { PostgresConnector } from '../src/postgres/postgres-connector.ts';
import type { ReplicationPosition, SourceChange } from '../src/replication.ts';
import { atLeast, postgresConnector, tableNamed, takeChanges } from './postgres-cdc-helpers.ts';

const admin = testPostgres();

const EVERY_TYPE_COLUMNS = `
  c_int2 int2, c_int4 int4, c_int8 int8, c_float4 float4, c_float8 float8,
  c_numeric numeric(30,10), c_numeric_free numeric, c_bool boolean, c_char char(5),
  c_varchar varchar(20) NOT NULL DEFAULT '', c_text text, c_uuid uuid, c_inet inet,
  c_macaddr macaddr, c_interval interval, c_json json, c_jsonb jsonb, c_date date,
  c_timestamp timestamp(3), c_timestamptz timestamptz, c_time time, c_timetz timetz,
  c_bytea bytea, c_int_array int[], c_mood mood, c_domain positive_int, c_bit1 bit(1)`;

const EVERY_TYPE_ROW = `(
  1, -32768, 2147483647, -9223372036854775808, 1.5, 0.30000000000000004,
  12345678901234567890.1234567891, 3.14159265358979323846264338327950288,
  true, 'ab', 'héllo wörld ✓', 'a longer text', 'a0eebc99-9c0b-4ef8-bb6d-6bb9bd380a11',
  '192.168.0.1/24', '08:00:2b:01:02:03', '1 year 2 months 3 days 04:05:06.5',
  '{"b": 1,  "a": [1, 2.50]}', '{"b": 1,  "a": [1, 2.50]}',
  '2024-02-29', '2024-02-29 23:59:59.1239', '2024-02-29 23:59:59.123456+05:30',
  '23:59:59.999999', '01:30:00+02', '\\xDEADBEEF', '{1,2,3}', 'happy', 7, B'1'
)`;

const SETUP = `
  CREATE TYPE mood AS ENUM ('sad', 'happy');
  CREATE DOMAIN positive_int AS int CHECK (VALUE > 0);
  CREATE TABLE every_type (id int PRIMARY KEY, ${EVERY_TYPE_COLUMNS});
  ALTER TABLE every_type REPLICA IDENTITY FULL;
  CREATE TABLE keyed (id int PRIMARY KEY, a text, b int, big text);
  ALTER TABLE keyed ALTER COLUMN big SET STORAGE EXTERNAL;
  CREATE TABLE full_row (id int PRIMARY KEY, a text, big text);
  ALTER TABLE full_row REPLICA IDENTITY FULL;
  ALTER TABLE full_row ALTER COLUMN big SET STORAGE EXTERNAL;
  CREATE TABLE altered (id int PRIMARY KEY, a text);
  CREATE TABLE steady (id int PRIMARY KEY, a text);
  CREATE TABLE unfollowed (id int PRIMARY KEY);
`;

/** An uncompressible text well past the TOAST threshold, stored out of line. */
const BIG = Array.from({ length: 400 }, (_, i) => `${i}:${(i * 7919) % 10007}`).join(',');

describe('PostgreSQL change stream values and operations', () => {
  let db: TestDatabase;
  let connector: PostgresConnector;
  let tables: readonly SourceTable[];
  let followed: readonly SourceTable[];
  /** Where the next test's stream starts: each test takes its own changes only. */
  let position: ReplicationPosition;

  beforeAll(async () => {
    db = await admin.createDatabase(SETUP);
    connector = postgresConnector(db);
    tables = (await connector.introspect()).tables;
    followed = tables.filter((table) => table.name !== 'unfollowed');
    const reader = await connector.openSnapshot({
      withPosition: true,
      tables: [...followed.map((table) => table.name), 'unfollowed'],
    });
    await reader.close();
    position = reader.position!;
  });

  afterAll(async () => {
    await connector?.dropReplication();
    await connector?.close();
    await db?.drop();
  });

  /** Runs `sql`, then streams from the last position until `count` changes arrived. */
  async function changesOf(sql: string, count: number): Promise<SourceChange[]> {
    await db.exec(sql);
    const taken = await takeChanges(connector, followed, position, atLeast(count), {
      acknowledge: true,
    });
    position = taken.position;
    expect(taken.changes).toHaveLength(count);
    return taken.changes;
  }

  async function snapshotRows(name: string): Promise<unknown[][]> {
    const table = tableNamed(tables, name);
    const reader = await connector.openSnapshot();
    try {
      const rows: unknown[][] = [];
      for await (const batch of reader.readTable({ table: name, columns: table.columns })) {
        rows.push(...batch);
      }
      return rows.sort((a, b) => Number(a[0]) - Number(b[0]));
    } finally {
      await reader.close();
    }
  }

  it('delivers every type in exactly the snapshot form, on insert, update and delete', async () => {
    const inserts = await changesOf(
      `INSERT INTO every_type VALUES ${EVERY_TYPE_ROW};
       INSERT INTO every_type (id) VALUES (2);
       INSERT INTO every_type (id, c_numeric, c_date, c_timestamp, c_timestamptz)
         VALUES (3, 'NaN', 'infinity', '-infinity', 'infinity');`,
      3,
    );
    const inserted = await snapshotRows('every_type');
    expect(inserts).toEqual(inserted.map((row) => ({ op: 'insert', table: 'every_type', row })));
    const first = inserts[0];
    expect(first?.op === 'insert' && first.row[23]).toBeInstanceOf(Uint8Array);

    // Row 1 takes row 2's values (value → NULL), row 2 takes row 3's (NULL → value).
    const updates = await changesOf(
      `UPDATE every_type SET (${columnList()}) = (SELECT ${columnList()} FROM every_type WHERE id = 2) WHERE id = 1;
       UPDATE every_type SET (${columnList()}) = (SELECT ${columnList()} FROM every_type WHERE id = 3) WHERE id = 2;`,
      2,
    );
    const updated = await snapshotRows('every_type');
    expect(updates).toEqual([
      { op: 'update', table: 'every_type', before: inserted[0], after: updated[0] },
      { op: 'update', table: 'every_type', before: inserted[1], after: updated[1] },
    ]);

    const deletes = await changesOf('DELETE FROM every_type', 3);
    const rowId = (change: SourceChange) => (change.op === 'delete' ? Number(change.row[0]) : 0);
    expect(deletes.sort((a, b) => rowId(a) - rowId(b))).toEqual(
      updated.map((row) => ({ op: 'delete', table: 'every_type', row })),
    );
  });

  it('sends key-only old rows under REPLICA IDENTITY DEFAULT, whole ones under FULL', async () => {
    await changesOf(
      `INSERT INTO keyed VALUES (1, 'a', 1, 'small'), (2, 'b', 2, NULL);
       INSERT INTO full_row VALUES (1, 'a', 'small')`,
      3,
    );
    const changes = await changesOf(
      `UPDATE keyed SET a = NULL, b = 10 WHERE id = 1;
       UPDATE keyed SET id = 3, a = 'c' WHERE id = 2;
       DELETE FROM keyed WHERE id = 3;
       UPDATE full_row SET a = NULL WHERE id = 1;
       UPDATE full_row SET id = 2, a = 'z' WHERE id = 1;
       DELETE FROM full_row WHERE id = 2`,
      6,
    );
    expect(changes).toEqual([
      // The key did not change: no old row at all.
      { op: 'update', table: 'keyed', before: null, after: [1, null, 10, 'small'] },
      // The key changed: the old key, the other columns unknown.
      {
        op: 'update',
        table: 'keyed',
        before: [2, undefined, undefined, undefined],
        after: [3, 'c', 2, null],
      },
      { op: 'delete', table: 'keyed', row: [3, undefined, undefined, undefined] },
      { op: 'update', table: 'full_row', before: [1, 'a', 'small'], after: [1, null, 'small'] },
      { op: 'update', table: 'full_row', before: [1, null, 'small'], after: [2, 'z', 'small'] },
      { op: 'delete', table: 'full_row', row: [2, 'z', 'small'] },
    ]);
  });

  it('leaves an unchanged TOASTed value undefined in the new row', async () => {
    await changesOf(
      `INSERT INTO keyed VALUES (10, 'a', 1, '${BIG}'); INSERT INTO full_row VALUES (10, 'a', '${BIG}')`,
      2,
    );
    const changes = await changesOf(
      `UPDATE keyed SET a = 'b' WHERE id = 10;
       UPDATE full_row SET a = 'b' WHERE id = 10;
       UPDATE keyed SET big = 'short now' WHERE id = 10`,
      3,
    );
    expect(changes).toEqual([
      { op: 'update', table: 'keyed', before: null, after: [10, 'b', 1, undefined] },
      // FULL logs the old row with its TOASTed values inlined; the new row still omits it.
      { op: 'update', table: 'full_row', before: [10, 'a', BIG], after: [10, 'b', undefined] },
      { op: 'update', table: 'keyed', before: null, after: [10, 'b', 1, 'short now'] },
    ]);
  });

  it('keeps a transaction together, in statement order, and never sends a rolled-back one', async () => {
    await db.exec('BEGIN; INSERT INTO steady VALUES (99); ROLLBACK');
    await db.exec('INSERT INTO unfollowed VALUES (1)');
    await db.exec(`
      BEGIN;
      INSERT INTO steady VALUES (1, 'x');
      INSERT INTO unfollowed VALUES (2);
      UPDATE steady SET a = 'y' WHERE id = 1;
      INSERT INTO keyed (id) VALUES (20);
      DELETE FROM steady WHERE id = 1;
      COMMIT;`);
    const taken = await takeChanges(connector, followed, position, atLeast(4), {
      acknowledge: true,
    });
    position = taken.position;
    expect(taken.changes).toEqual([
      { op: 'insert', table: 'steady', row: [1, 'x'] },
      { op: 'update', table: 'steady', before: null, after: [1, 'y'] },
      { op: 'insert', table: 'keyed', row: [20, null, null, null] },
      { op: 'delete', table: 'steady', row: [1, undefined] },
    ]);
    const holding = taken.batches.filter((batch) => batch.changes.length > 0);
    expect(holding).toHaveLength(1);
  });

  it('sends TRUNCATE once per followed table', async () => {
    await changesOf("INSERT INTO steady VALUES (5, 'e')", 1);
    const changes = await changesOf('TRUNCATE steady, keyed, unfollowed', 2);
    expect(changes).toEqual([
      { op: 'truncate', table: 'steady' },
      { op: 'truncate', table: 'keyed' },
    ]);
  });

  it('keeps streaming a table that gained a column, and reports one that lost a requested column', async () => {
    const added = await changesOf(
      `INSERT INTO altered VALUES (1, 'before');
       ALTER TABLE altered ADD COLUMN extra int;
       INSERT INTO altered VALUES (2, 'after', 2);
       INSERT INTO steady VALUES (6, 'f');`,
      3,
    );
    expect(added).toEqual([
      { op: 'insert', table: 'altered', row: [1, 'before'] },
      { op: 'insert', table: 'altered', row: [2, 'after'] },
      { op: 'insert', table: 'steady', row: [6, 'f'] },
    ]);
    const dropped = await changesOf(
      `ALTER TABLE altered DROP COLUMN a;
       INSERT INTO altered VALUES (3, 3);
       INSERT INTO steady VALUES (7, 'g');`,
      2,
    );
    expect(dropped).toEqual([
      { op: 'schemaChange', table: 'altered', detail: 'column "a" dropped' },
      { op: 'insert', table: 'steady', row: [7, 'g'] },
    ]);
  });
});

function columnList(): string {
  return EVERY_TYPE_COLUMNS.split('\n')
    .flatMap((line) => [...line.matchAll(/\b(c_\w+) /g)].map((match) => match[1]))
    .join(', ');
}
