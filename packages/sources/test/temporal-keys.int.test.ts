/**
 * By-key and change-column reads with microsecond timestamp and time values: the canonical
 * values a snapshot delivered find the same rows again on the real servers.
 */
import type { SourceColumn } from '@replix/engine';
import type { TestDatabase } from '@replix/testkit';
import { testMariaDb, testPostgres } from '@replix/testkit/vitest';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import type { SourceConnector } from '../src/connector.ts';
import { parseTimestampText, parseTimeText } from '../src/temporal-text.ts';
import { mySqlConnector } from './mysql-cdc-helpers.ts';
import { postgresConnector } from './postgres-cdc-helpers.ts';

const cases = [
  {
    engine: 'mariadb',
    create: () =>
      testMariaDb().createDatabase(
        'CREATE TABLE t (at DATETIME(6), wake TIME(6), label VARCHAR(10), PRIMARY KEY (at, wake))',
      ),
    connect: mySqlConnector,
  },
  {
    engine: 'postgres',
    create: () =>
      testPostgres().createDatabase(
        'CREATE TABLE t (at timestamptz, wake time(6), label text, PRIMARY KEY (at, wake))',
      ),
    connect: postgresConnector,
  },
] as const;

const ROWS = [
  ['2022-09-10 16:46:03.905795', '23:59:59.999999', 'a'],
  ['2022-09-10 16:46:03.905796', '23:59:59.999998', 'b'],
  ['1969-12-31 23:59:59.999999', '00:00:00.000001', 'c'],
  ['2024-02-29 23:59:59.999999', '12:00:00', 'd'],
] as const;

describe.each(cases)('temporal keys on $engine', ({ create, connect }) => {
  let db: TestDatabase;
  let connector: SourceConnector;
  let columns: readonly SourceColumn[];

  beforeAll(async () => {
    db = await create();
    const values = ROWS.map(([at, wake, label]) => `('${at}', '${wake}', '${label}')`);
    await db.exec(`INSERT INTO t VALUES ${values.join(', ')}`);
    connector = connect(db);
    columns = (await connector.introspect()).tables[0]!.columns;
  });

  afterAll(async () => {
    await connector?.close();
    await db?.drop();
  });

  it('reports the columns’ precision', () => {
    expect(columns.map((c) => [c.name, c.precision])).toEqual([
      ['at', 6],
      ['wake', 6],
      ['label', undefined],
    ]);
  });

  it('finds rows by keys that differ by one microsecond', async () => {
    const key = (index: number) => [
      parseTimestampText(ROWS[index]![0]),
      parseTimeText(ROWS[index]![1]),
    ];
    const rows = await connector.readRows({
      table: 't',
      columns,
      keyColumns: ['at', 'wake'],
      keys: [key(1), key(2)],
    });
    expect(rows.map((row) => row[2]).sort()).toEqual(['b', 'c']);
    expect(rows.find((row) => row[2] === 'b')?.slice(0, 2)).toEqual(key(1));
  });

  it('reads only rows above a change-column value, to the microsecond', async () => {
    const rows = await connector.readRows({
      table: 't',
      columns,
      keyColumns: [],
      keys: null,
      after: { column: 'at', value: parseTimestampText('2022-09-10 16:46:03.905795') },
    });
    expect(rows.map((row) => row[2]).sort()).toEqual(['b', 'd']);
    const later = await connector.readRows({
      table: 't',
      columns,
      keyColumns: [],
      keys: null,
      after: { column: 'wake', value: parseTimeText('23:59:59.999998') },
    });
    expect(later.map((row) => row[2])).toEqual(['a']);
  });
});
