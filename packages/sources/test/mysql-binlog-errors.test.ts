import { describe, expect, it } from 'vitest';
import {
  PositionExpiredError,
  ReplicationError,
  SourceConnectionError,
  type SourceTarget,
} from '../src/errors.ts';
import { binlogStreamError } from '../src/mysql/mysql-binlog-errors.ts';
import { BinlogPosition } from '../src/mysql/mysql-position.ts';

const target: SourceTarget = {
  backend: 'mysql',
  host: 'db.internal',
  port: 3306,
  database: 'shop',
  user: 'cdc',
};
const from = new BinlogPosition('binlog.000002', 945);

function serverError(errno: number, code: string, message: string): Error {
  return Object.assign(new Error(message), { errno, code, sqlState: 'HY000' });
}

describe('binlogStreamError', () => {
  it('reads the server’s 1236 about the position as an expired position', () => {
    for (const message of [
      'Could not find first log file name in binary log index file',
      "Client requested master to start replication from impossible position; the first event 'binlog.000002' at 945",
      'bogus data in log event',
    ]) {
      const error = binlogStreamError(
        serverError(1236, 'ER_SOURCE_FATAL_ERROR_READING_BINLOG', message),
        from,
        target,
      );
      expect(error).toBeInstanceOf(PositionExpiredError);
      expect(error).toMatchObject({ code: 'position_expired', position: from.serialize() });
      expect(error.message).toContain('binlog position binlog.000002:945');
      expect(error.message).toContain('take a new snapshot');
    }
  });

  it('tells other 1236 errors apart', () => {
    const off = binlogStreamError(
      serverError(1236, 'ER_MASTER_FATAL_ERROR_READING_BINLOG', 'Binary log is not open'),
      from,
      target,
    );
    expect(off).toMatchObject({ code: 'replication_not_ready' });
    const twin = binlogStreamError(
      serverError(
        1236,
        'ER_MASTER_FATAL_ERROR_READING_BINLOG',
        'A slave with the same server_uuid/server_id as this slave has connected to the master',
      ),
      from,
      target,
    );
    expect(twin).toMatchObject({ code: 'replication_failed', shouldRetry: true });
  });

  it('maps a missing REPLICATION SLAVE to not ready, a lost line to connection lost', () => {
    const denied = binlogStreamError(
      serverError(1227, 'ER_SPECIFIC_ACCESS_DENIED_ERROR', 'Access denied; you need …'),
      from,
      target,
    );
    expect(denied).toBeInstanceOf(ReplicationError);
    expect(denied).toMatchObject({
      code: 'replication_not_ready',
      issues: ['Grant the user REPLICATION SLAVE on *.*.'],
    });
    for (const code of ['PROTOCOL_CONNECTION_LOST', 'ECONNRESET', 'ER_CONNECTION_KILLED']) {
      const lost = binlogStreamError(Object.assign(new Error('x'), { code }), from, target);
      expect(lost).toBeInstanceOf(SourceConnectionError);
      expect(lost).toMatchObject({ code: 'source_connection_lost', host: 'db.internal' });
      expect(lost.message).not.toContain('db.internal');
    }
  });

  it('reports anything else as a retryable replication failure, without its text', () => {
    const error = binlogStreamError(new Error('Unsupported type "6" on column "x"'), from, target);
    expect(error).toMatchObject({ code: 'replication_failed', shouldRetry: true });
    expect(error.message).toBe('The binlog stream failed (unknown error).');
  });
});
