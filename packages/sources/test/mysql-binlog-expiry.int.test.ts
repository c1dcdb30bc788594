import {
  type DatabaseServer,
  mariaDbAdmin,
  startDedicatedServer,
  type TestDatabase,
} from '@replix/testkit';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { PositionExpiredError, SourceConnectionError } from '../src/errors.ts';
import type { MySqlConnector } from '../src/mysql/mysql-connector.ts';
import { BinlogPosition } from '../src/mysql/mysql-position.ts';
import { Follower, mySqlConnector, positionNow } from './mysql-cdc-helpers.ts';

// Purging binlogs and crashing the server would pull history from under the other tests'
// streams: this file has a MariaDB server of its own.
describe('MySQL change stream: lost history and lost servers', () => {
  let server: DatabaseServer;
  let db: TestDatabase;
  let connector: MySqlConnector;

  beforeAll(async () => {
    server = await startDedicatedServer('mariadb');
    db = await mariaDbAdmin(server.url).createDatabase('CREATE TABLE t (id INT PRIMARY KEY)');
    connector = mySqlConnector(db);
  });

  afterAll(async () => {
    await connector?.close();
    await server?.stop();
  });

  async function failure(from: BinlogPosition): Promise<unknown> {
    const tables = [...(await connector.introspect()).tables];
    const follower = new Follower(connector, tables, from);
    try {
      await follower.next(5000);
      return new Error('expected the stream to fail');
    } catch (error) {
      return error;
    } finally {
      await follower.stop();
    }
  }

  it('fails with PositionExpiredError when the binlog it needs was purged', async () => {
    const old = await positionNow(connector);
    await db.exec('INSERT INTO t VALUES (1); FLUSH BINARY LOGS; INSERT INTO t VALUES (2)');
    const [status] = await db.query<{ File: string }>('SHOW MASTER STATUS');
    // MariaDB keeps a file until its binlog checkpoint says no crash recovery needs it; that
    // comes a moment after the rotation, so the purge is repeated until it takes.
    await expect
      .poll(
        async () => {
          await db.exec(`PURGE BINARY LOGS TO '${status?.File}'`);
          const [first] = await db.query<{ Log_name: string }>('SHOW BINARY LOGS');
          return first?.Log_name;
        },
        { timeout: 5000, interval: 50 },
      )
      .toBe(status?.File);

    const error = await failure(old);
    expect(error).toBeInstanceOf(PositionExpiredError);
    expect(error).toMatchObject({ code: 'position_expired', position: old.serialize() });
    expect((error as Error).message).toContain(`binlog position ${old}`);
  });

  it('fails with PositionExpiredError for a position the binlog never had', async () => {
    const now = await positionNow(connector);
    for (const from of [
      new BinlogPosition(now.file, 999_999_999),
      new BinlogPosition(`${now.base}.999999`, 4),
    ]) {
      expect(await failure(from)).toBeInstanceOf(PositionExpiredError);
    }
  });

  it('fails with source_connection_lost when the server goes down', async () => {
    const tables = [...(await connector.introspect()).tables];
    const follower = new Follower(connector, tables, await positionNow(connector));
    try {
      await db.exec('INSERT INTO t VALUES (3)');
      await follower.until((changes) => changes.length >= 1);
      await server.restart({ crash: true });
      const error = await follower.next().then(
        () => new Error('expected a failure'),
        (failure: unknown) => failure,
      );
      expect(error).toBeInstanceOf(SourceConnectionError);
      expect(error).toMatchObject({ code: 'source_connection_lost' });
    } finally {
      await follower.stop();
    }
  });
});
