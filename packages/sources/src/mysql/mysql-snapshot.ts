import type { Connection } from 'mysql2';
import type { SnapshotOptions, SnapshotReader, TableReadRequest } from '../connector.ts';
import { type SourceTarget, sourceErrorFrom } from '../errors.ts';
import { checkReadRequest, checkSnapshotState, type SnapshotReadState } from '../read-request.ts';
import { RowBatchPump } from '../row-batch-pump.ts';
import type { MySqlSnapshotShare } from '../snapshot-share.ts';
import type { TlsNegotiation } from '../source-tls.ts';
import {
  type MySqlConnectorOptions,
  mySqlConnectionOptions,
  mySqlTarget,
  mySqlTlsNegotiation,
} from './mysql-connection-options.ts';
import { loadMysql2 } from './mysql-driver.ts';
import { mySqlFlavour } from './mysql-flavour.ts';
import type { BinlogPosition } from './mysql-position.ts';
import { startMySqlSnapshot } from './mysql-snapshot-position.ts';
import { mySqlSelectSql, quoteMySqlIdentifier } from './mysql-sql.ts';
import { mySqlRowConverter } from './mysql-types.ts';

/**
 * A consistent snapshot of a MySQL / MariaDB database on one dedicated connection: a
 * REPEATABLE READ transaction started WITH CONSISTENT SNAPSHOT, so every table read sees the
 * database as of `openMySqlSnapshot`.
 */
export class MySqlSnapshotReader implements SnapshotReader {
  readonly position: BinlogPosition | null;
  readonly share: MySqlSnapshotShare | null;
  readonly #connection: Connection;
  /** The connection holding the table locks for joiners, until `joined`. */
  #locks: Connection | null;
  readonly #target: SourceTarget;
  readonly #onClose: () => void;
  #state: SnapshotReadState = 'open';
  /** Set once the connection can no longer be ended politely (dropped, or destroyed mid-read). */
  #broken = false;

  constructor(
    connection: Connection,
    target: SourceTarget,
    onClose: () => void,
    position: BinlogPosition | null,
    shared: { share: MySqlSnapshotShare; locks: Connection } | null = null,
  ) {
    this.position = position;
    this.share = shared?.share ?? null;
    this.#locks = shared?.locks ?? null;
    this.#connection = connection;
    this.#target = target;
    this.#onClose = onClose;
    // A fatal error while no query runs is emitted on the connection; unheard, it would crash
    // the process. The next read reports it through its own query instead.
    connection.on('error', () => {
      this.#broken = true;
    });
  }

  async *readTable(request: TableReadRequest): AsyncGenerator<unknown[][], void, undefined> {
    checkSnapshotState(this.#state);
    const batchSize = checkReadRequest(request);
    const sql = mySqlSelectSql(request.table, request.columns, request.where);
    const convert = mySqlRowConverter(request.columns);
    this.#state = 'reading';
    const connection = this.#connection;
    const pump = new RowBatchPump(batchSize, convert, connection);
    const query = connection.query({ sql, rowsAsArray: true });
    query.on('result', (row: unknown[]) => pump.row(row));
    query.on('error', (error: unknown) => pump.fail(error));
    query.on('end', () => pump.end());
    try {
      yield* pump.batches((failure) =>
        sourceErrorFrom(failure, this.#target, `reading table "${request.table}"`),
      );
    } finally {
      await this.#endRead(pump.ended);
    }
  }

  /** Makes the reader ready for the next table, or gives the snapshot up. */
  async #endRead(resultComplete: boolean): Promise<void> {
    if (this.#state === 'closed') return; // closed from outside while reading
    if (resultComplete) {
      this.#state = 'open';
      return;
    }
    // The consumer stopped early (or a value failed to convert) with rows still on the wire.
    // MySQL cannot abandon a result set short of reading it to the end, which could be the
    // whole table, so the connection goes, and the snapshot with it.
    this.#broken = true;
    await this.close();
  }

  async joined(): Promise<void> {
    const locks = this.#locks;
    this.#locks = null;
    if (locks) await endConnection(locks, 'UNLOCK TABLES');
  }

  async close(): Promise<void> {
    await this.joined();
    if (this.#state === 'closed') return;
    // Mid-read, COMMIT would queue behind the paused result set forever: just drop the line.
    const polite = !this.#broken && this.#state !== 'reading';
    this.#state = 'closed';
    this.#onClose();
    if (!polite) {
      this.#connection.destroy();
      return;
    }
    await endConnection(this.#connection, 'COMMIT');
  }
}

/** Ends a session politely with `last`, or drops it: it only read, nothing is lost. */
async function endConnection(connection: Connection, last: string): Promise<void> {
  try {
    await connection.promise().query(last);
    await connection.promise().end();
  } catch {
    connection.destroy();
  }
}

/** Session settings, each one round trip, before the snapshot transaction starts. */
const SESSION_SETUP = [
  // Timestamps print in UTC, which the converters assume.
  "SET time_zone = '+00:00'",
  // A paused stream leaves the server waiting to write; by default it gives up after 60 s,
  // shorter than a slow consumer may take over one batch.
  'SET SESSION net_write_timeout = 3600',
  'SET SESSION TRANSACTION ISOLATION LEVEL REPEATABLE READ',
];

/** A new connection for a snapshot session; its fatal errors are the caller's to hear. */
async function connectMySql(
  options: MySqlConnectorOptions,
  tls: TlsNegotiation,
): Promise<Connection> {
  const mysql = await loadMysql2();
  return tls.connect(async (useTls) => {
    const opened = mysql.createConnection(mySqlConnectionOptions(options, useTls));
    // Until the reader listens, a fatal error is reported through the pending query: unheard
    // on the connection, it would crash the process.
    opened.on('error', () => {});
    try {
      await opened.promise().connect();
    } catch (error) {
      opened.destroy();
      throw error;
    }
    return opened;
  });
}

/**
 * How long the snapshot waits for the read locks its joiners need before it reads alone: while
 * `LOCK TABLES` waits for a long transaction, the source's writers to those tables queue
 * behind it, so the wait is kept short.
 */
const LOCK_WAIT_SECONDS = 2;

/**
 * Locks `tables` against writes on a connection of its own, so that the sessions starting their
 * snapshots while it holds them all see the same commits; null when the user lacks the
 * privilege (LOCK TABLES) or a long transaction holds a table: the snapshot is not shared then.
 */
async function lockForJoiners(
  options: MySqlConnectorOptions,
  tls: TlsNegotiation,
  tables: readonly string[],
): Promise<Connection | null> {
  if (tables.length === 0) return null;
  let connection: Connection | undefined;
  try {
    connection = await connectMySql(options, tls);
    const session = connection.promise();
    await session.query(`SET SESSION lock_wait_timeout = ${LOCK_WAIT_SECONDS}`);
    const list = tables.map((table) => `${quoteMySqlIdentifier(table)} READ`).join(', ');
    await session.query(`LOCK TABLES ${list}`);
    return connection;
  } catch {
    connection?.destroy();
    return null;
  }
}

/**
 * Opens a dedicated connection and starts a consistent, read-only snapshot on it; with
 * `withPosition`, also records the binlog position the snapshot corresponds to. With `joiners`
 * and `reads`, the tables read stay locked against writes until `joined`, so that joiners
 * (`joinMySqlSnapshot`) see the same snapshot.
 */
export async function openMySqlSnapshot(
  options: MySqlConnectorOptions,
  tls: TlsNegotiation,
  onClose: () => void = () => {},
  snapshotOptions: SnapshotOptions = {},
): Promise<MySqlSnapshotReader> {
  const target = mySqlTarget(options);
  let connection: Connection;
  try {
    connection = await connectMySql(options, tls);
  } catch (error) {
    throw sourceErrorFrom(error, target, 'opening a snapshot');
  }
  const wanted = (snapshotOptions.joiners ?? 0) > 0;
  const locks = wanted ? await lockForJoiners(options, tls, snapshotOptions.reads ?? []) : null;
  const session = connection.promise();
  let position: BinlogPosition | null;
  try {
    for (const statement of SESSION_SETUP) await session.query(statement);
    let flavour = null;
    if (snapshotOptions.withPosition) {
      const [rows] = await session.query('SELECT VERSION() AS version');
      flavour = mySqlFlavour(String((rows as { version: string }[])[0]?.version));
    }
    position = await startMySqlSnapshot(session, flavour);
  } catch (error) {
    connection.destroy();
    locks?.destroy();
    throw sourceErrorFrom(error, target, 'opening a snapshot');
  }
  const share: MySqlSnapshotShare = { backend: 'mysql', options };
  return new MySqlSnapshotReader(
    connection,
    target,
    onClose,
    position,
    locks ? { share, locks } : null,
  );
}

/**
 * Joins the snapshot a reader shared: a session of its own starting a consistent snapshot while
 * the sharing reader's locks keep every commit to the tables read out (see `lockForJoiners`).
 */
export async function joinMySqlSnapshot(share: MySqlSnapshotShare): Promise<MySqlSnapshotReader> {
  const { options } = share;
  const target = mySqlTarget(options);
  let connection: Connection;
  try {
    connection = await connectMySql(options, mySqlTlsNegotiation(options));
  } catch (error) {
    throw sourceErrorFrom(error, target, 'joining a snapshot');
  }
  try {
    const session = connection.promise();
    for (const statement of SESSION_SETUP) await session.query(statement);
    await startMySqlSnapshot(session, null);
  } catch (error) {
    connection.destroy();
    throw sourceErrorFrom(error, target, 'joining a snapshot');
  }
  return new MySqlSnapshotReader(connection, target, () => {}, null);
}
