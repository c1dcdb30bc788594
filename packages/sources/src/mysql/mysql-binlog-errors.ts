import {
  PositionExpiredError,
  ReplicationError,
  SourceConnectionError,
  SourceError,
  SourceQueryError,
  type SourceTarget,
  sourceErrorFrom,
} from '../errors.ts';
import type { BinlogPosition } from './mysql-position.ts';

/** ER_MASTER_FATAL_ERROR_READING_BINLOG: the dump thread cannot send from where it was asked. */
const FATAL_READING_BINLOG = 1236;
/** ER_SPECIFIC_ACCESS_DENIED_ERROR, e.g. no REPLICATION SLAVE. */
const ACCESS_DENIED = 1227;
/** The dump thread killed, or the server going down. */
const GONE_CODES = new Set(['ER_CONNECTION_KILLED', 'ER_SERVER_SHUTDOWN', 'ER_QUERY_INTERRUPTED']);

function field(error: unknown, name: 'errno' | 'code' | 'message'): unknown {
  return typeof error === 'object' && error !== null && name in error
    ? (error as Record<string, unknown>)[name]
    : undefined;
}

/**
 * What a binlog stream failed with, as a `SourceError` with a safe message. The server's 1236
 * errors are about the position asked for ("Could not find first log file name in binary log
 * index file", "impossible position", "bogus data in log event"): the history is gone, or was
 * never there, and only a new snapshot helps. Its text names binlog files and offsets only.
 */
export function binlogStreamError(
  error: unknown,
  from: BinlogPosition,
  target: SourceTarget,
): SourceError {
  if (error instanceof SourceError) return error;
  const errno = field(error, 'errno');
  const code = field(error, 'code');
  const message = String(field(error, 'message') ?? '');
  if (errno === FATAL_READING_BINLOG) {
    if (/binary log is not open/i.test(message)) {
      return new ReplicationError('replication_not_ready', 'The source has no binary log.', {
        issues: ['Turn the binary log on: start the server with log_bin.'],
      });
    }
    if (/same server_uuid|server_id/i.test(message)) {
      return new ReplicationError(
        'replication_failed',
        'Another binlog reader with the same server id connected to the source.',
        { shouldRetry: true },
      );
    }
    return new PositionExpiredError(
      from.serialize(),
      `The source can no longer stream from binlog position ${from} (${message.replace(/\.$/, '')}): take a new snapshot.`,
    );
  }
  if (errno === ACCESS_DENIED) {
    return new ReplicationError('replication_not_ready', 'The source refused to send its binlog.', {
      issues: ['Grant the user REPLICATION SLAVE on *.*.'],
    });
  }
  if (typeof code === 'string' && GONE_CODES.has(code)) {
    return new SourceConnectionError(
      'source_connection_lost',
      `The connection to the source database was lost (${code}).`,
      target,
      code,
    );
  }
  const mapped = sourceErrorFrom(error, target, 'streaming changes');
  if (mapped instanceof SourceQueryError) {
    // Not a rejected query: zongji failing to decode an event, or an unexpected server error.
    return new ReplicationError(
      'replication_failed',
      `The binlog stream failed (${typeof code === 'string' ? code : 'unknown error'}).`,
      { shouldRetry: true },
    );
  }
  return mapped;
}
