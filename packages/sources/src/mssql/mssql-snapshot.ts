import type { ConnectionPool, Request, Transaction } from 'mssql';
import type { SnapshotOptions, SnapshotReader, TableReadRequest } from '../connector.ts';
import { ReplicationError, SourceError, type SourceTarget } from '../errors.ts';
import { checkReadRequest, checkSnapshotState, type SnapshotReadState } from '../read-request.ts';
import { RowBatchPump } from '../row-batch-pump.ts';
import {
  type MsSqlConnectorOptions,
  type MsSqlDriverConnection,
  msSqlConfig,
  msSqlTarget,
} from './mssql-connection-options.ts';
import { loadMssql } from './mssql-driver.ts';
import { msSqlErrorFrom } from './mssql-errors.ts';
import { endMsSqlPool, settlesWithin } from './mssql-pool.ts';
import { MsSqlLsn } from './mssql-position.ts';
import { msSqlQuery } from './mssql-query.ts';
import { CAPTURE_JOB_ISSUE, ENABLE_CDC_ISSUE } from './mssql-replication.ts';
import { msSqlSelectSql } from './mssql-sql.ts';
import { msSqlRowConverter } from './mssql-types.ts';

/** How long a cancelled read may take to wind down before the snapshot is given up. */
const CANCEL_TIMEOUT_MS = 30_000;

/** How the snapshot transaction isolates its reads; see `openMsSqlSnapshot`. */
export type MsSqlSnapshotIsolation = 'snapshot' | 'repeatable read';

interface ReaderParts {
  readonly pool: ConnectionPool;
  readonly transaction: Transaction;
  readonly connection: () => MsSqlDriverConnection | undefined;
  readonly schema: string;
  readonly target: SourceTarget;
  readonly isolation: MsSqlSnapshotIsolation;
  readonly position: MsSqlLsn | null;
  readonly onClose: () => void;
}

/**
 * A snapshot of one SQL Server schema on one dedicated connection holding one transaction (see
 * `openMsSqlSnapshot` for its isolation). Rows stream with mssql's `stream` mode: the request is
 * paused whenever a batch fills, which stops tedious reading the socket, so TCP pushes back to
 * the server until the consumer asks for the next batch.
 */
export class MsSqlSnapshotReader implements SnapshotReader {
  readonly position: MsSqlLsn | null;
  /** SQL Server cannot hand a transaction's snapshot to another session: one reader reads all. */
  readonly share = null;
  readonly isolation: MsSqlSnapshotIsolation;
  readonly #parts: ReaderParts;
  #state: SnapshotReadState = 'open';
  /** Set once the transaction cannot be ended politely (connection dropped, transaction lost). */
  #broken = false;
  /** Settles when the request of the current read has finished. */
  #running: Promise<void> = Promise.resolve();

  constructor(parts: ReaderParts) {
    this.#parts = parts;
    this.position = parts.position;
    this.isolation = parts.isolation;
    parts.pool.on('error', () => {
      this.#broken = true;
    });
    // The server rolled the transaction back (a fatal error, XACT_ABORT): the snapshot is gone.
    parts.transaction.on('rollback', (aborted: boolean) => {
      if (aborted) this.#broken = true;
    });
  }

  async *readTable(request: TableReadRequest): AsyncGenerator<unknown[][], void, undefined> {
    checkSnapshotState(this.#state);
    if (this.#broken) {
      await this.close();
      throw new SourceError('snapshot_closed', 'The snapshot was lost with its connection.');
    }
    const batchSize = checkReadRequest(request);
    const { schema, target } = this.#parts;
    const text = msSqlSelectSql(schema, request.table, request.columns, request.where);
    const convert = msSqlRowConverter(request.columns);
    this.#state = 'reading';

    const query = this.#parts.transaction.request();
    query.stream = true;
    query.arrayRowMode = true;
    const pump = new RowBatchPump(batchSize, convert, query);
    let serverFailed = false;
    let finished = () => {};
    this.#running = new Promise<void>((resolve) => {
      finished = resolve;
    });
    query.on('row', (row: unknown[]) => pump.row(row));
    // In stream mode mssql reports each error as an event, then 'done' once the request is over.
    query.on('error', (error: unknown) => {
      if (pump.abandoned) return;
      serverFailed = true;
      pump.fail(error);
    });
    query.on('done', () => {
      pump.end();
      finished();
    });
    query.query(text).catch((error: unknown) => {
      // Stream mode resolves even for failures; this only guards against a driver change.
      pump.end(error);
      finished();
    });

    try {
      yield* pump.batches((failure) =>
        msSqlErrorFrom(failure, target, `reading table "${request.table}"`),
      );
    } finally {
      pump.abandon();
      await this.#endRead(query, pump.ended, serverFailed);
    }
  }

  /** Makes the reader ready for the next table, or gives the snapshot up. */
  async #endRead(query: Request, ended: boolean, serverFailed: boolean): Promise<void> {
    if (this.#state === 'closed') return; // closed from outside while reading
    if (!ended) {
      // The consumer stopped early, or a value failed to convert, with rows still to come.
      // Unlike MySQL, SQL Server can abandon a result: the cancel (a TDS attention) stops the
      // query and leaves the transaction, and with it the snapshot, open for the next table.
      query.cancel();
      query.resume();
      if (!(await settlesWithin(this.#running, CANCEL_TIMEOUT_MS))) this.#broken = true;
    }
    if (!this.#broken && (!ended || serverFailed) && !(await this.#transactionIsActive())) {
      this.#broken = true;
    }
    if (this.#broken) {
      await this.close();
      return;
    }
    this.#state = 'open';
  }

  /**
   * After a cancel or an error: whether the transaction survived. Most errors (a bad `where`)
   * leave it active; some doom it or roll it back (XACT_STATE -1 or 0), and a read outside it
   * would no longer see the snapshot.
   */
  async #transactionIsActive(): Promise<boolean> {
    try {
      const [row] = await msSqlQuery(this.#parts.transaction, 'SELECT XACT_STATE() AS state');
      return row?.state === 1;
    } catch {
      return false;
    }
  }

  async joined(): Promise<void> {}

  async close(): Promise<void> {
    if (this.#state === 'closed') return;
    // Mid-read the transaction's connection is busy with a paused result: end it outright.
    const polite = !this.#broken && this.#state !== 'reading';
    this.#state = 'closed';
    const { pool, transaction, connection, onClose } = this.#parts;
    onClose();
    if (polite) {
      try {
        // Nothing was written: committing just ends the transaction and frees its versions.
        await transaction.commit();
        await endMsSqlPool(pool);
        return;
      } catch {
        // The connection is already gone; fall through and let go of everything.
      }
    }
    await endMsSqlPool(pool, { connection: connection(), transaction, running: this.#running });
  }
}

const SNAPSHOT_ISOLATION_SQL = `
SELECT snapshot_isolation_state FROM sys.databases WHERE database_id = DB_ID()`;

// Inside the transaction. Under SNAPSHOT isolation the transaction's view of the data is fixed
// by its first read of data, not by BEGIN; fn_cdc_get_max_lsn reads cdc.lsn_time_mapping, so
// this query fixes the snapshot and reads the LSN the snapshot stands at, in one step.
const POSITION_SQL = `
SELECT sys.fn_cdc_get_max_lsn() AS max_lsn,
  (SELECT is_cdc_enabled FROM sys.databases WHERE database_id = DB_ID()) AS cdc_enabled`;

/**
 * The change-history position the snapshot stands at: the highest commit LSN the CDC capture
 * job has copied into the change tables. Every change at or before it is in the snapshot; some
 * changes after it may already be too (committed before the snapshot, but not yet copied by the
 * capture job), and a stream from this position repeats them. Applied by key, as inserts over
 * existing rows and updates to the values they already have, they leave the data as it was.
 */
async function snapshotPosition(transaction: Transaction): Promise<MsSqlLsn> {
  const [row] = await msSqlQuery(transaction, POSITION_SQL);
  const maxLsn = row?.max_lsn;
  if (maxLsn instanceof Uint8Array) {
    const lsn = MsSqlLsn.fromBytes(maxLsn);
    if (!lsn.isZero) return lsn;
  }
  const enabled = row?.cdc_enabled === true;
  throw new ReplicationError(
    'replication_not_ready',
    enabled
      ? 'The CDC capture job has not recorded any position in the source database yet.'
      : 'Change data capture is not enabled for the source database.',
    { issues: [enabled ? CAPTURE_JOB_ISSUE : ENABLE_CDC_ISSUE], shouldRetry: enabled },
  );
}

/**
 * Opens a dedicated connection and starts the snapshot transaction on it.
 *
 * With ALLOW_SNAPSHOT_ISOLATION ON the transaction runs at SNAPSHOT isolation: every table read
 * sees the database as of the transaction's first read, from row versions, without locking
 * anything. Otherwise it runs at REPEATABLE READ, which is how SQL Server isolates without row
 * versions, and which is weaker in two ways: each table is read as of its own read (rows
 * committed meanwhile to a table not read yet are seen, so tables may disagree with each other),
 * and every row read stays share-locked until the snapshot closes, blocking writers to those
 * rows (or, after lock escalation, to whole tables) for that long. With a position, change data
 * capture repairs the first: the position is taken before any table is read, so the stream
 * replays whatever the reads overtook. The second is why the docs ask for snapshot isolation.
 */
export async function openMsSqlSnapshot(
  options: MsSqlConnectorOptions,
  snapshotOptions: SnapshotOptions = {},
  onClose: () => void = () => {},
): Promise<MsSqlSnapshotReader> {
  const target = msSqlTarget(options);
  let connection: MsSqlDriverConnection | undefined;
  const driver = await loadMssql();
  const pool = new driver.ConnectionPool(
    msSqlConfig(options, {
      maxConnections: 1,
      // A read stays open, paused, for as long as the consumer takes over a batch.
      requestTimeout: 0,
      onConnection: (opened) => {
        connection = opened;
      },
    }),
  );
  // An error on the connection while no request runs is emitted on the pool; unheard, it would
  // crash the process. The next read reports it through its own request.
  pool.on('error', () => {});
  let transaction: Transaction | undefined;
  try {
    await pool.connect();
    const [database] = await msSqlQuery(pool, SNAPSHOT_ISOLATION_SQL);
    const isolation: MsSqlSnapshotIsolation =
      database?.snapshot_isolation_state === 1 ? 'snapshot' : 'repeatable read';
    transaction = new driver.Transaction(pool);
    await transaction.begin(
      isolation === 'snapshot'
        ? driver.ISOLATION_LEVEL.SNAPSHOT
        : driver.ISOLATION_LEVEL.REPEATABLE_READ,
    );
    const position = snapshotOptions.withPosition ? await snapshotPosition(transaction) : null;
    return new MsSqlSnapshotReader({
      pool,
      transaction,
      connection: () => connection,
      schema: options.schema ?? 'dbo',
      target,
      isolation,
      position,
      onClose,
    });
  } catch (error) {
    await endMsSqlPool(pool, { connection, transaction });
    throw msSqlErrorFrom(error, target, 'opening a snapshot');
  }
}
