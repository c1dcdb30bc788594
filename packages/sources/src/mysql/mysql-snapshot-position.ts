import { ReplicationError } from '../errors.ts';
import type { MySqlFlavour } from './mysql-flavour.ts';
import { BinlogPosition } from './mysql-position.ts';

/** The slice of a mysql2 promise connection the snapshot start needs (fakes in unit tests). */
export interface MySqlSession {
  query(sql: string): Promise<unknown>;
}

// The read view is fixed here, not at the first read.
const START = 'START TRANSACTION WITH CONSISTENT SNAPSHOT, READ ONLY';

type Row = Record<string, unknown>;

async function rows(session: MySqlSession, sql: string): Promise<Row[]> {
  const [result] = (await session.query(sql)) as [Row[]];
  return result;
}

function binlogOff(): ReplicationError {
  return new ReplicationError(
    'replication_not_ready',
    'The source has no binary log to follow: start the server with log_bin.',
    { issues: ['Turn the binary log on: start the server with log_bin.'] },
  );
}

function position(file: unknown, offset: unknown): BinlogPosition {
  if (typeof file !== 'string' || file === '') throw binlogOff();
  return new BinlogPosition(file, Number(offset));
}

/** MariaDB: the consistent snapshot reports the binlog position it stands at, lock-free. */
async function mariaDbSnapshot(session: MySqlSession): Promise<BinlogPosition> {
  await session.query(START);
  const status = new Map<string, unknown>();
  for (const row of await rows(session, "SHOW STATUS LIKE 'binlog_snapshot_%'")) {
    status.set(String(row.Variable_name).toLowerCase(), row.Value);
  }
  return position(status.get('binlog_snapshot_file'), status.get('binlog_snapshot_position'));
}

/**
 * MySQL: no commit can happen while the global read lock is held, so the snapshot started under
 * it and the binlog position read under it are the same point in history (as mysqldump
 * --single-transaction --source-data does it). The lock is held for three round trips.
 */
async function readLockSnapshot(
  session: MySqlSession,
  flavour: MySqlFlavour,
): Promise<BinlogPosition> {
  await session.query('FLUSH TABLES WITH READ LOCK');
  await session.query(START);
  const [status] = await rows(session, flavour.binlogStatusSql);
  await session.query('UNLOCK TABLES');
  return position(status?.File, status?.Position);
}

/**
 * Starts the consistent, read-only snapshot transaction on `session`; with a `flavour`, also
 * returns the binlog position the snapshot corresponds to, so that a change stream started there
 * misses and repeats nothing. On failure the caller drops the connection, locks and all.
 */
export async function startMySqlSnapshot(
  session: MySqlSession,
  flavour: MySqlFlavour | null,
): Promise<BinlogPosition | null> {
  if (flavour === null) {
    await session.query(START);
    return null;
  }
  return flavour.snapshotPosition === 'snapshot-status'
    ? mariaDbSnapshot(session)
    : readLockSnapshot(session, flavour);
}
