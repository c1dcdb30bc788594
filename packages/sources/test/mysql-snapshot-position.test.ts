import { describe, expect, it } from 'vitest';
import { ReplicationError } from '../src/errors.ts';
import { mySqlFlavour } from '../src/mysql/mysql-flavour.ts';
import { type MySqlSession, startMySqlSnapshot } from '../src/mysql/mysql-snapshot-position.ts';

/** A session that records statements and answers the status queries from `answers`. */
function fakeSession(answers: Record<string, Record<string, unknown>[]>) {
  const statements: string[] = [];
  const session: MySqlSession = {
    async query(sql: string) {
      statements.push(sql);
      return [answers[sql] ?? [], []];
    },
  };
  return { session, statements };
}

describe('mySqlFlavour', () => {
  it('tells MariaDB from MySQL, and MySQL’s renamed status statement', () => {
    expect(mySqlFlavour('10.11.6-MariaDB-0+deb12u1-log')).toEqual({
      mariaDb: true,
      snapshotPosition: 'snapshot-status',
      binlogStatusSql: 'SHOW MASTER STATUS',
    });
    expect(mySqlFlavour('8.0.36')).toMatchObject({
      mariaDb: false,
      snapshotPosition: 'read-lock',
      binlogStatusSql: 'SHOW MASTER STATUS',
    });
    expect(mySqlFlavour('8.4.0').binlogStatusSql).toBe('SHOW BINARY LOG STATUS');
    expect(mySqlFlavour('9.1.0-commercial').binlogStatusSql).toBe('SHOW BINARY LOG STATUS');
    expect(mySqlFlavour('11.4.2-MariaDB').binlogStatusSql).toBe('SHOW MASTER STATUS');
  });
});

describe('startMySqlSnapshot', () => {
  it('starts a plain snapshot without a position', async () => {
    const { session, statements } = fakeSession({});
    expect(await startMySqlSnapshot(session, null)).toBeNull();
    expect(statements).toEqual(['START TRANSACTION WITH CONSISTENT SNAPSHOT, READ ONLY']);
  });

  it('reads MariaDB’s snapshot position without locks', async () => {
    const { session, statements } = fakeSession({
      "SHOW STATUS LIKE 'binlog_snapshot_%'": [
        { Variable_name: 'Binlog_snapshot_file', Value: 'binlog.000007' },
        { Variable_name: 'Binlog_snapshot_position', Value: '3800' },
      ],
    });
    const position = await startMySqlSnapshot(session, mySqlFlavour('10.11.6-MariaDB'));
    expect(String(position)).toBe('binlog.000007:3800');
    expect(statements).toEqual([
      'START TRANSACTION WITH CONSISTENT SNAPSHOT, READ ONLY',
      "SHOW STATUS LIKE 'binlog_snapshot_%'",
    ]);
  });

  it('holds MySQL still under the global read lock while it starts and reads the position', async () => {
    const { session, statements } = fakeSession({
      'SHOW BINARY LOG STATUS': [{ File: 'mysql-bin.000003', Position: 1234 }],
    });
    const position = await startMySqlSnapshot(session, mySqlFlavour('8.4.0'));
    expect(String(position)).toBe('mysql-bin.000003:1234');
    expect(statements).toEqual([
      'FLUSH TABLES WITH READ LOCK',
      'START TRANSACTION WITH CONSISTENT SNAPSHOT, READ ONLY',
      'SHOW BINARY LOG STATUS',
      'UNLOCK TABLES',
    ]);
  });

  it('says the binlog is off when the server reports no file', async () => {
    const cases: [string, Record<string, Record<string, unknown>[]>][] = [
      [
        '10.6.0-MariaDB',
        {
          "SHOW STATUS LIKE 'binlog_snapshot_%'": [
            { Variable_name: 'Binlog_snapshot_file', Value: '' },
          ],
        },
      ],
      ['8.0.36', {}],
    ];
    for (const [version, answers] of cases) {
      const { session } = fakeSession(answers);
      const error = await startMySqlSnapshot(session, mySqlFlavour(version)).catch((e) => e);
      expect(error).toBeInstanceOf(ReplicationError);
      expect(error).toMatchObject({
        code: 'replication_not_ready',
        issues: ['Turn the binary log on: start the server with log_bin.'],
      });
    }
  });
});
