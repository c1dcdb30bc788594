import type { SourceTable } from '@replix/engine';
import type { TestDatabase } from '@replix/testkit';
import { testMariaDb, testPostgres } from '@replix/testkit/vitest';
import mysql from 'mysql2/promise';
import pg from 'pg';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import type { SnapshotReader, SourceConnector } from '../src/connector.ts';
import { connectorFromUrl } from '../src/connector-from-url.ts';
import { joinSnapshot } from '../src/join-snapshot.ts';
import type { BinlogPosition } from '../src/mysql/mysql-position.ts';
import { Follower, mySqlConnector, readRows, tableNamed } from './mysql-cdc-helpers.ts';

const sleep = (ms: number) => new Promise((resolve) => setTimeout(resolve, ms));

/** Units start at 100 in every row of `a` and move one at a time to the same row of `b`. */
const ROWS = 20;
const TOTAL = ROWS * 100;

const sum = (rows: unknown[][]) => rows.reduce((total, row) => total + Number(row[1]), 0);

/**
 * Transactions that each move a unit from a row of `a` to a row of `b` until `stop`: any two
 * reads that do not see the same commits see a total other than `TOTAL`.
 */
async function mover(state: Movers, exec: (sql: string) => Promise<unknown>): Promise<void> {
  while (!state.stop) {
    const id = 1 + (state.moved % ROWS);
    await exec('BEGIN');
    await exec(`UPDATE a SET n = n - 1 WHERE id = ${id}`);
    await exec(`UPDATE b SET n = n + 1 WHERE id = ${id}`);
    await exec('COMMIT');
    state.moved++;
  }
}

interface Movers {
  stop: boolean;
  moved: number;
}

async function movedAtLeast(state: Movers, count: number): Promise<void> {
  while (state.moved < count) await sleep(10);
}

/**
 * Opens a shared snapshot while movers commit, reads `a` on it and `b` on a joiner that joins
 * a little later: both see the same commits, so the units add up.
 */
async function readSplit(
  connector: SourceConnector,
  tables: readonly SourceTable[],
  state: Movers,
  start: () => Promise<void>[],
  withPosition = false,
): Promise<{ reader: SnapshotReader; a: unknown[][]; b: unknown[][] }> {
  const running = start();
  try {
    await movedAtLeast(state, 5);
    expect(connector.snapshotShareable).toBe(true);
    const reader = await connector.openSnapshot({ joiners: 1, reads: ['a', 'b'], withPosition });
    try {
      expect(reader.share).not.toBeNull();
      // The movers keep trying meanwhile: without the shared snapshot, their commits would
      // land between the two sessions' snapshots.
      await sleep(100);
      const joiner = await joinSnapshot(reader.share ?? expect.unreachable());
      await reader.joined();
      await movedAtLeast(state, state.moved + 5);
      const a = await readRows(reader, tableNamed(tables, 'a'));
      const b = await readRows(joiner, tableNamed(tables, 'b'));
      await joiner.close();
      return { reader, a, b };
    } finally {
      await reader.close();
    }
  } finally {
    state.stop = true;
    await Promise.all(running);
  }
}

describe('a shared snapshot on MariaDB', () => {
  const admin = testMariaDb();
  let db: TestDatabase;

  beforeAll(async () => {
    db = await admin.createDatabase(`
      CREATE TABLE a (id INT PRIMARY KEY, n INT NOT NULL);
      CREATE TABLE b (id INT PRIMARY KEY, n INT NOT NULL);
      CREATE TABLE marker (id INT PRIMARY KEY);
      INSERT INTO a SELECT seq, 100 FROM seq_1_to_${ROWS};
      INSERT INTO b SELECT seq, 0 FROM seq_1_to_${ROWS};
    `);
  });

  afterAll(async () => {
    await db?.drop();
  });

  function movers(state: Movers): () => Promise<void>[] {
    return () =>
      [1, 2].map(async () => {
        const connection = await mysql.createConnection({ uri: db.url });
        try {
          return await mover(state, (sql) => connection.query(sql));
        } finally {
          await connection.end();
        }
      });
  }

  it('gives a joiner the same commits, and the position where both end', async () => {
    const connector = mySqlConnector(db);
    const tables = (await connector.introspect()).tables;
    const state = { stop: false, moved: 0 };
    try {
      const { reader, a, b } = await readSplit(connector, tables, state, movers(state), true);
      expect(sum(a) + sum(b)).toBe(TOTAL);

      // Every move committed after the snapshot is in the stream from its position, once.
      await db.exec('INSERT INTO marker VALUES (1)');
      const follower = new Follower(connector, tables, reader.position as BinlogPosition);
      try {
        const changes = await follower.until((c) => c.some((change) => change.table === 'marker'));
        const rows = new Map(
          [...a, ...b].map((row, i) => [`${i < ROWS ? 'a' : 'b'}${row[0]}`, row]),
        );
        for (const change of changes) {
          if (change.op !== 'update') continue;
          const key = `${change.table}${change.before?.[0]}`;
          expect(rows.get(key)).toEqual(change.before);
          rows.set(key, [...change.after]);
        }
        const [finalA, finalB] = await Promise.all([
          db.query<{ id: number; n: number }>('SELECT id, n FROM a ORDER BY id'),
          db.query<{ id: number; n: number }>('SELECT id, n FROM b ORDER BY id'),
        ]);
        expect([...rows.values()]).toEqual([...finalA, ...finalB].map((row) => [row.id, row.n]));
      } finally {
        await follower.stop();
      }
    } finally {
      await connector.close();
    }
  });

  it('shares nothing for a user who may not lock tables: one reader reads all', async () => {
    const user = `ro_${db.name.slice(-8)}`;
    await admin.query(`CREATE USER '${user}'@'%' IDENTIFIED BY 'pw'`);
    await admin.query(`GRANT SELECT ON \`${db.name}\`.* TO '${user}'@'%'`);
    const url = new URL(db.url);
    url.username = user;
    url.password = 'pw';
    const connector = connectorFromUrl(url.toString());
    try {
      const tables = (await connector.introspect()).tables;
      const reader = await connector.openSnapshot({ joiners: 2, reads: ['a', 'b'] });
      expect(reader.share).toBeNull();
      await reader.joined();
      const a = await readRows(reader, tableNamed(tables, 'a'));
      const b = await readRows(reader, tableNamed(tables, 'b'));
      await reader.close();
      expect(sum(a) + sum(b)).toBe(TOTAL);
    } finally {
      await connector.close();
      await admin.query(`DROP USER '${user}'@'%'`);
    }
  });

  it('releases the locks once every joiner has joined', async () => {
    const connector = mySqlConnector(db);
    try {
      const reader = await connector.openSnapshot({ joiners: 1, reads: ['a', 'b'] });
      // Held: a write waits until `joined`.
      let written = false;
      const write = db.exec('UPDATE a SET n = n WHERE id = 1').then(() => {
        written = true;
      });
      await sleep(200);
      expect(written).toBe(false);
      await reader.joined();
      await write;
      expect(written).toBe(true);
      await reader.close();
    } finally {
      await connector.close();
    }
  });
});

describe('a shared snapshot on PostgreSQL', () => {
  const admin = testPostgres();
  let db: TestDatabase;

  beforeAll(async () => {
    db = await admin.createDatabase(`
      CREATE TABLE a (id INT PRIMARY KEY, n INT NOT NULL);
      CREATE TABLE b (id INT PRIMARY KEY, n INT NOT NULL);
      INSERT INTO a SELECT i, 100 FROM generate_series(1, ${ROWS}) AS i;
      INSERT INTO b SELECT i, 0 FROM generate_series(1, ${ROWS}) AS i;
    `);
  });

  afterAll(async () => {
    await db?.drop();
  });

  it('gives a joiner the exported snapshot', async () => {
    const connector = connectorFromUrl(db.url);
    const tables = (await connector.introspect()).tables;
    const state = { stop: false, moved: 0 };
    const movers = () =>
      [1, 2].map(async () => {
        const client = new pg.Client({ connectionString: db.url });
        await client.connect();
        try {
          return await mover(state, (sql) => client.query(sql));
        } finally {
          await client.end();
        }
      });
    try {
      const { a, b } = await readSplit(connector, tables, state, movers);
      expect(sum(a) + sum(b)).toBe(TOTAL);
    } finally {
      await connector.close();
    }
  });
});
