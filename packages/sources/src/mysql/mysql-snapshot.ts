import mysql, { type Connection } from 'mysql2';
import type { SnapshotOptions, SnapshotReader, TableReadRequest } from '../connector.ts';
import { type SourceTarget, sourceErrorFrom } from '../errors.ts';
import { checkReadRequest, checkSnapshotState, type SnapshotReadState } from '../read-request.ts';
import { RowBatchPump } from '../row-batch-pump.ts';
import type { TlsNegotiation } from '../source-tls.ts';
import {
  type MySqlConnectorOptions,
  mySqlConnectionOptions,
  mySqlTarget,
} from './mysql-connection-options.ts';
import { mySqlFlavour } from './mysql-flavour.ts';
import type { BinlogPosition } from './mysql-position.ts';
import { startMySqlSnapshot } from './mysql-snapshot-position.ts';
import { mySqlSelectSql } from './mysql-sql.ts';
import { mySqlRowConverter } from './mysql-types.ts';

/**
 * A consistent snapshot of a MySQL / MariaDB database on one dedicated connection: a
 * REPEATABLE READ transaction started WITH CONSISTENT SNAPSHOT, so every table read sees the
 * database as of `openMySqlSnapshot`.
 */
export class MySqlSnapshotReader implements SnapshotReader {
  readonly position: BinlogPosition | null;
  readonly #connection: Connection;
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
  ) {
    this.position = position;
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

  async close(): Promise<void> {
    if (this.#state === 'closed') return;
    // Mid-read, COMMIT would queue behind the paused result set forever: just drop the line.
    const polite = !this.#broken && this.#state !== 'reading';
    this.#state = 'closed';
    this.#onClose();
    if (!polite) {
      this.#connection.destroy();
      return;
    }
    const connection = this.#connection.promise();
    try {
      await connection.query('COMMIT');
      await connection.end();
    } catch {
      // The snapshot is read-only: nothing is lost if the connection is already gone.
      this.#connection.destroy();
    }
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

/**
 * Opens a dedicated connection and starts a consistent, read-only snapshot on it; with
 * `withPosition`, also records the binlog position the snapshot corresponds to.
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
    connection = await tls.connect(async (useTls) => {
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
  } catch (error) {
    throw sourceErrorFrom(error, target, 'opening a snapshot');
  }
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
    throw sourceErrorFrom(error, target, 'opening a snapshot');
  }
  return new MySqlSnapshotReader(connection, target, onClose, position);
}
