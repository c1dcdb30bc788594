import type { SourceTable } from '@replix/engine';
import type { TestDatabase } from '@replix/testkit';
import { testMariaDb } from '@replix/testkit/vitest';
import mysql from 'mysql2/promise';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { SourceConnectionError, type SourceError } from '../src/errors.ts';
import type { MySqlConnector } from '../src/mysql/mysql-connector.ts';
import { BinlogPosition } from '../src/mysql/mysql-position.ts';
import type { SourceChange } from '../src/replication.ts';
import {
  changesOf,
  Follower,
  mySqlConnector,
  positionNow,
  readRows,
  tableNamed,
} from './mysql-cdc-helpers.ts';

const admin = testMariaDb();

const sleep = (ms: number) => new Promise((resolve) => setTimeout(resolve, ms));

describe('MySQL change stream: snapshot continuity', () => {
  let db: TestDatabase;
  let connector: MySqlConnector;
  let tables: SourceTable[];

  beforeAll(async () => {
    db = await admin.createDatabase(`
      CREATE TABLE counter (id INT PRIMARY KEY, n INT NOT NULL, note VARCHAR(20));
      CREATE TABLE marker (id INT PRIMARY KEY);
      INSERT INTO counter SELECT seq, 0, NULL FROM seq_1_to_30;
    `);
    connector = mySqlConnector(db);
    tables = (await connector.introspect()).tables.filter((t) => t.name !== 'other');
  });

  afterAll(async () => {
    await connector?.close();
    await db?.drop();
  });

  /** Random small transactions on ids 1-60 until `stop` is set; conflicts are just skipped. */
  async function writer(state: { stop: boolean }, seed: number): Promise<number> {
    const connection = await mysql.createConnection({ uri: db.url });
    let random = seed;
    const next = (n: number) => {
      random = (random * 1_103_515_245 + 12_345) % 2_147_483_648;
      return random % n;
    };
    const statement = () => {
      const id = next(60) + 1;
      switch (next(5)) {
        case 0:
          return `INSERT INTO counter VALUES (${id}, 0, 'new') ON DUPLICATE KEY UPDATE n = n + 1`;
        case 1:
          return `UPDATE counter SET n = n + 1, note = IF(note IS NULL, 'set', NULL) WHERE id = ${id}`;
        case 2:
          return `DELETE FROM counter WHERE id = ${id}`;
        case 3:
          return `UPDATE IGNORE counter SET id = IF(id > 30, id - 30, id + 30) WHERE id = ${id}`;
        default:
          return `UPDATE counter SET n = n - 1 WHERE id BETWEEN ${id} AND ${id + 3}`;
      }
    };
    let transactions = 0;
    try {
      while (!state.stop) {
        try {
          await connection.query('BEGIN');
          for (let k = next(3); k >= 0; k--) await connection.query(statement());
          await connection.query(next(6) === 0 ? 'ROLLBACK' : 'COMMIT');
          transactions++;
        } catch {
          await connection.query('ROLLBACK').catch(() => {});
        }
      }
    } finally {
      await connection.end();
    }
    return transactions;
  }

  it('streams from a snapshot taken mid-writes: snapshot + changes = the table', async () => {
    const counter = tableNamed(tables, 'counter');
    const state = { stop: false };
    const writers = [writer(state, 1), writer(state, 2), writer(state, 3)];
    await sleep(150);
    const reader = await connector.openSnapshot({ withPosition: true });
    const snapshot = await readRows(reader, counter);
    await reader.close();
    expect(reader.position).toBeInstanceOf(BinlogPosition);
    await sleep(300);
    state.stop = true;
    expect((await Promise.all(writers)).reduce((a, b) => a + b)).toBeGreaterThan(20);
    await db.exec('INSERT INTO marker VALUES (1)');

    const follower = new Follower(connector, tables, reader.position as BinlogPosition);
    try {
      const changes = await follower.until((c) => changesOf(c, 'insert', 'marker').length > 0);
      // Applied strictly: an insert must be new, an update or delete must find the row as the
      // change says it was. A change applied twice, or one from before the snapshot, fails.
      const rows = new Map(snapshot.map((row) => [row[0], row]));
      for (const change of changes.filter((c) => c.table === 'counter')) {
        if (change.op === 'insert') {
          expect(rows.has(change.row[0])).toBe(false);
          rows.set(change.row[0], [...change.row]);
        } else if (change.op === 'update') {
          expect(rows.get(change.before?.[0])).toEqual(change.before);
          rows.delete(change.before?.[0]);
          expect(rows.has(change.after[0])).toBe(false);
          rows.set(change.after[0], [...change.after]);
        } else if (change.op === 'delete') {
          expect(rows.get(change.row[0])).toEqual(change.row);
          rows.delete(change.row[0]);
        } else {
          throw new Error(`unexpected ${change.op}`);
        }
      }
      const actual = await db.query<{ id: number; n: number; note: string | null }>(
        'SELECT id, n, note FROM counter',
      );
      const byId = (a: readonly unknown[], b: readonly unknown[]) => Number(a[0]) - Number(b[0]);
      expect([...rows.values()].sort(byId)).toEqual(
        actual.map((row) => [row.id, row.n, row.note]).sort(byId),
      );
      expect(changes.length).toBeGreaterThan(20);
    } finally {
      await follower.stop();
    }
  });
});

describe('MySQL change stream: changes and transactions', () => {
  let db: TestDatabase;
  let connector: MySqlConnector;
  let tables: SourceTable[];

  beforeAll(async () => {
    db = await admin.createDatabase(`
      CREATE TABLE t (id INT PRIMARY KEY, label VARCHAR(10) NULL);
      CREATE TABLE u (k VARCHAR(5) PRIMARY KEY, n BIGINT NOT NULL);
      CREATE TABLE other (id INT PRIMARY KEY);
      CREATE TABLE m (id INT PRIMARY KEY) ENGINE=Aria;
    `);
    connector = mySqlConnector(db);
    tables = (await connector.introspect()).tables.filter((table) => table.name !== 'other');
  });

  afterAll(async () => {
    await connector?.close();
    await db?.drop();
  });

  it('gives a snapshot a position only when asked to', async () => {
    const plain = await connector.openSnapshot();
    await plain.close();
    expect(plain.position).toBeNull();
    const positioned = await connector.openSnapshot({ withPosition: true });
    await positioned.close();
    const [status] = await admin.query<{ File: string }>('SHOW MASTER STATUS');
    expect((positioned.position as BinlogPosition).file).toBe(status?.File);
  });

  it('delivers updates as whole before and after rows, key changes and NULLs included', async () => {
    const follower = new Follower(connector, tables, await positionNow(connector));
    try {
      await db.exec(`
        INSERT INTO t VALUES (1, 'x');
        UPDATE t SET label = NULL WHERE id = 1;
        UPDATE t SET label = 'y' WHERE id = 1;
        UPDATE t SET id = 2 WHERE id = 1;
        DELETE FROM t WHERE id = 2;
      `);
      expect(await follower.until((c) => c.length >= 5)).toEqual([
        { op: 'insert', table: 't', row: [1, 'x'] },
        { op: 'update', table: 't', before: [1, 'x'], after: [1, null] },
        { op: 'update', table: 't', before: [1, null], after: [1, 'y'] },
        { op: 'update', table: 't', before: [1, 'y'], after: [2, 'y'] },
        { op: 'delete', table: 't', row: [2, 'y'] },
      ]);
      for (const batch of follower.batches) expect(batch.position).toBeInstanceOf(BinlogPosition);
    } finally {
      await follower.stop();
    }
  });

  it('keeps a transaction whole, never delivers a rolled-back one, and skips other tables', async () => {
    const follower = new Follower(connector, tables, await positionNow(connector));
    try {
      await db.exec(`
        BEGIN; INSERT INTO t VALUES (10, 'a'); INSERT INTO other VALUES (1);
          INSERT INTO u VALUES ('k', 9007199254740993); UPDATE t SET label = 'b' WHERE id = 10;
          DELETE FROM t WHERE id = 10; COMMIT;
        BEGIN; INSERT INTO t VALUES (99, 'never'); ROLLBACK;
        INSERT INTO t VALUES (11, 'after');
      `);
      const changes = await follower.until((c) => c.length >= 5);
      expect(changes).toEqual([
        { op: 'insert', table: 't', row: [10, 'a'] },
        { op: 'insert', table: 'u', row: ['k', '9007199254740993'] },
        { op: 'update', table: 't', before: [10, 'a'], after: [10, 'b'] },
        { op: 'delete', table: 't', row: [10, 'b'] },
        { op: 'insert', table: 't', row: [11, 'after'] },
      ]);
      // The transaction's four changes travel in one batch.
      const first = follower.batches.find((batch) => batch.changes.length > 0);
      expect(first?.changes.slice(0, 4)).toEqual(changes.slice(0, 4));
    } finally {
      await follower.stop();
    }
  });

  it('delivers TRUNCATE as a truncate, and non-transactional tables at their COMMIT', async () => {
    await db.exec('INSERT INTO t VALUES (20, NULL), (21, NULL)');
    const follower = new Follower(connector, tables, await positionNow(connector));
    try {
      await db.exec('TRUNCATE TABLE t; INSERT INTO m VALUES (1), (2); TRUNCATE m');
      expect(await follower.until((c) => c.length >= 4)).toEqual([
        { op: 'truncate', table: 't' },
        { op: 'insert', table: 'm', row: [1] },
        { op: 'insert', table: 'm', row: [2] },
        { op: 'truncate', table: 'm' },
      ]);
    } finally {
      await follower.stop();
    }
  });

  it('resumes from a batch position without replaying anything before it', async () => {
    const from = await positionNow(connector);
    const first = new Follower(connector, tables, from);
    let afterOne: BinlogPosition;
    let afterTwo: BinlogPosition;
    try {
      await db.exec("INSERT INTO t VALUES (31, 'one')");
      await first.until((c) => c.length >= 1);
      afterOne = first.batches.at(-1)?.position as BinlogPosition;
      await db.exec("INSERT INTO t VALUES (32, 'two')");
      await first.until((c) => c.length >= 2);
      afterTwo = first.batches.at(-1)?.position as BinlogPosition;
    } finally {
      await first.stop();
    }
    expect(afterOne.compare(from)).toBeGreaterThan(0);
    expect(afterTwo.compare(afterOne)).toBeGreaterThan(0);
    expect(afterTwo.serialize() > afterOne.serialize()).toBe(true);
    await db.exec("INSERT INTO t VALUES (33, 'three')");

    const inserted = (changes: SourceChange[]) =>
      changesOf(changes, 'insert').map((change) => change.row[0]);
    for (const [position, expected] of [
      [afterOne, [32, 33]],
      [afterTwo, [33]],
      [connector.positionFromString(afterTwo.serialize()), [33]],
    ] as const) {
      const follower = new Follower(connector, tables, position as BinlogPosition);
      try {
        expect(inserted(await follower.until((c) => inserted(c).includes(33)))).toEqual(expected);
      } finally {
        await follower.stop();
      }
    }
  });
});

describe('MySQL change stream: schema changes', () => {
  let db: TestDatabase;
  let connector: MySqlConnector;
  let tables: SourceTable[];

  beforeAll(async () => {
    db = await admin.createDatabase(`
      CREATE TABLE a (id INT PRIMARY KEY, x INT);
      CREATE TABLE b (id INT PRIMARY KEY);
      CREATE TABLE c (id INT PRIMARY KEY);
    `);
    connector = mySqlConnector(db);
    tables = [...(await connector.introspect()).tables];
  });

  afterAll(async () => {
    await connector?.close();
    await db?.drop();
  });

  it('reports an altered or dropped table once, skips it, and keeps streaming the others', async () => {
    const follower = new Follower(connector, tables, await positionNow(connector));
    try {
      // The stream reads the tables' columns as it starts: wait for it, then change them.
      await db.exec('INSERT INTO a VALUES (1, 1)');
      await follower.until((c) => c.length >= 1);
      await db.exec(`
        ALTER TABLE a ADD COLUMN y INT;
        INSERT INTO a VALUES (2, 2, 2); INSERT INTO b VALUES (1); INSERT INTO c VALUES (1);
        ALTER TABLE a DROP COLUMN y; INSERT INTO a VALUES (3, 3);
        DROP TABLE b; INSERT INTO c VALUES (2);
      `);
      const changes = await follower.until((c) => changesOf(c, 'insert', 'c').length >= 2);
      expect(changes).toEqual([
        { op: 'insert', table: 'a', row: [1, 1] },
        { op: 'schemaChange', table: 'a', detail: 'The table was altered (ALTER TABLE).' },
        { op: 'insert', table: 'b', row: [1] },
        { op: 'insert', table: 'c', row: [1] },
        { op: 'schemaChange', table: 'b', detail: 'The table was dropped.' },
        { op: 'insert', table: 'c', row: [2] },
      ]);
    } finally {
      await follower.stop();
    }
  });

  it('reports a table that no longer fits the requested columns as the stream starts', async () => {
    await db.exec('CREATE TABLE d (id INT PRIMARY KEY, v INT)');
    const d = tableNamed((await connector.introspect()).tables, 'd');
    const from = await positionNow(connector);
    await db.exec('ALTER TABLE d MODIFY v BIGINT; INSERT INTO d VALUES (1, 1)');
    const follower = new Follower(connector, [d], from);
    try {
      expect(await follower.until((c) => c.length >= 1)).toEqual([
        { op: 'schemaChange', table: 'd', detail: 'Column "v" is bigint(20) now, not int(11).' },
      ]);
      // And nothing of it after that.
      await db.exec('INSERT INTO d VALUES (2, 2)');
      expect(await follower.next(300)).toBeNull();
      expect(follower.batches[0]?.position).toEqual(from);
    } finally {
      await follower.stop();
    }
  });
});

describe('MySQL change stream: connections', () => {
  let db: TestDatabase;
  let connector: MySqlConnector;
  let tables: SourceTable[];

  beforeAll(async () => {
    db = await admin.createDatabase('CREATE TABLE t (id INT PRIMARY KEY)');
    connector = mySqlConnector(db);
    tables = [...(await connector.introspect()).tables];
  });

  afterAll(async () => {
    await connector?.close();
    await db?.drop();
  });

  async function connections(): Promise<{ all: number; dumps: number }> {
    const rows = await admin.query<{ command: string }>(
      'SELECT COMMAND AS command FROM information_schema.PROCESSLIST WHERE DB = ?',
      [db.name],
    );
    return {
      all: rows.length,
      dumps: rows.filter((row) => row.command.startsWith('Binlog Dump')).length,
    };
  }

  let rows = 100;
  /** Waits until the follower's stream runs; returns how many connections the database has. */
  async function dumping(follower: Follower): Promise<number> {
    await db.exec(`INSERT INTO t VALUES (${rows++})`);
    expect(await follower.next()).not.toBeNull();
    const during = await connections();
    expect(during.dumps).toBe(1);
    return during.all;
  }

  it('ends promptly when aborted and closes both of its connections', async () => {
    const follower = new Follower(connector, tables, await positionNow(connector));
    const during = await dumping(follower);
    const pending = follower.next(5000);
    const aborted = Date.now();
    follower.abort();
    await expect(pending).rejects.toThrow('the stream ended');
    expect(Date.now() - aborted).toBeLessThan(1000);
    await expect.poll(connections).toEqual({ all: during - 2, dumps: 0 });
  });

  it('closes its connections on abort even while the consumer holds a batch', async () => {
    const follower = new Follower(connector, tables, await positionNow(connector));
    try {
      const during = await dumping(follower);
      follower.abort();
      await expect.poll(connections).toEqual({ all: during - 2, dumps: 0 });
    } finally {
      await follower.stop();
    }
  });

  it('closes its connections when the consumer breaks out of the loop', async () => {
    const controller = new AbortController();
    const from = await positionNow(connector);
    await db.exec('INSERT INTO t VALUES (2)');
    let during = 0;
    for await (const batch of connector.streamChanges({
      tables: [{ table: 't', columns: tables[0]!.columns }],
      from,
      signal: controller.signal,
    })) {
      expect(batch.changes).toEqual([{ op: 'insert', table: 't', row: [2] }]);
      during = (await connections()).all;
      break;
    }
    await expect.poll(connections).toEqual({ all: during - 2, dumps: 0 });
  });

  it('ends at once when the signal is already aborted', async () => {
    const controller = new AbortController();
    controller.abort();
    const stream = connector.streamChanges({
      tables: [{ table: 't', columns: tables[0]!.columns }],
      from: await positionNow(connector),
      signal: controller.signal,
    });
    for await (const _ of stream) throw new Error('no batch expected');
  });

  it('fails with source_connection_lost when the server drops the stream', async () => {
    const follower = new Follower(connector, tables, await positionNow(connector));
    try {
      await dumping(follower);
      const [dump] = await admin.query<{ id: number }>(
        "SELECT ID AS id FROM information_schema.PROCESSLIST WHERE DB = ? AND COMMAND LIKE 'Binlog Dump%'",
        [db.name],
      );
      await admin.exec(`KILL ${dump?.id}`);
      const error = await follower.next().then(
        () => new Error('expected a failure'),
        (failure: unknown) => failure,
      );
      expect(error).toBeInstanceOf(SourceConnectionError);
      expect(error).toMatchObject({ code: 'source_connection_lost', backend: 'mysql' });
      expect((error as SourceError).message).not.toContain('127.0.0.1');
      await expect.poll(async () => (await connections()).dumps).toBe(0);
    } finally {
      await follower.stop();
    }
  });

  it('refuses a position of another backend', async () => {
    const stream = connector.streamChanges({
      tables: [{ table: 't', columns: tables[0]!.columns }],
      from: { backend: 'postgres', compare: () => 0, serialize: () => '', toString: () => '' },
      signal: new AbortController().signal,
    });
    await expect(stream[Symbol.asyncIterator]().next()).rejects.toMatchObject({
      code: 'replication_failed',
    });
  });
});

describe('MySqlConnector.checkReplication', () => {
  let db: TestDatabase;
  let user: string;

  beforeAll(async () => {
    db = await admin.createDatabase('CREATE TABLE t (id INT PRIMARY KEY)');
    user = `r_${db.name.slice(-8)}`;
    await admin.exec(
      `CREATE USER '${user}'@'%'; GRANT SELECT ON \`${db.name}\`.* TO '${user}'@'%'`,
    );
  });

  afterAll(async () => {
    await admin.exec(`DROP USER IF EXISTS '${user}'@'%'`);
    await db?.drop();
  });

  it('finds the harness server ready, with the facts behind it', async () => {
    const connector = mySqlConnector(db);
    try {
      expect(await connector.checkReplication()).toEqual({
        ready: true,
        issues: [],
        facts: {
          logBin: true,
          format: 'ROW',
          rowImage: 'FULL',
          serverId: 1,
          binlogChecksum: 'CRC32',
          replicationPrivileges: true,
          reloadPrivilege: null,
        },
      });
      // Nothing to acknowledge or drop on MySQL; both succeed.
      await connector.acknowledge(await positionNow(connector));
      await connector.dropReplication();
    } finally {
      await connector.close();
    }
  });

  it('names the missing privileges of a user without them', async () => {
    const url = new URL(db.url);
    url.username = user;
    const connector = mySqlConnector({ ...db, url: url.toString() });
    try {
      const readiness = await connector.checkReplication();
      expect(readiness.ready).toBe(false);
      expect(readiness.facts.replicationPrivileges).toBe(false);
      expect(readiness.issues).toEqual([
        'Grant the user REPLICATION SLAVE and REPLICATION CLIENT (BINLOG MONITOR on MariaDB 10.5+) on *.*.',
      ]);
    } finally {
      await connector.close();
    }
  });
});
