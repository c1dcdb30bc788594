import type pg from 'pg';
import type Cursor from 'pg-cursor';
import type { SnapshotReader, TableReadRequest } from '../connector.ts';
import { type SourceTarget, sourceErrorFrom } from '../errors.ts';
import { checkReadRequest, checkSnapshotState, type SnapshotReadState } from '../read-request.ts';
import type { PostgresSnapshotShare } from '../snapshot-share.ts';
import type { TlsNegotiation } from '../source-tls.ts';
import {
  type PostgresConnectorOptions,
  postgresConnectionConfig,
  postgresTarget,
  postgresTlsNegotiation,
} from './postgres-connection-options.ts';
import { loadPg, loadPgCursor } from './postgres-driver.ts';
import type { Lsn } from './postgres-position.ts';
import { SNAPSHOT_SESSION_SQL, TEXT_TYPES } from './postgres-session.ts';
import { postgresSelectSql } from './postgres-sql.ts';
import { postgresRowConverter } from './postgres-types.ts';

/**
 * A consistent snapshot of one PostgreSQL schema on one dedicated connection: a REPEATABLE READ
 * READ ONLY transaction, so every table read sees the database as of `openPostgresSnapshot`.
 * Each read runs inside a savepoint, so a failed read (say, a bad `where`) leaves the snapshot
 * usable for the next table instead of aborting the transaction.
 */
export class PostgresSnapshotReader implements SnapshotReader {
  readonly position: Lsn | null;
  /** Set by `openPostgresSnapshot` when joiners were asked for and the export worked. */
  share: PostgresSnapshotShare | null = null;
  readonly #client: pg.Client;
  readonly #schema: string;
  readonly #target: SourceTarget;
  readonly #onClose: () => void;
  #state: SnapshotReadState = 'open';
  /** Set once the connection can no longer be ended politely. */
  #broken = false;

  constructor(
    client: pg.Client,
    schema: string,
    target: SourceTarget,
    onClose: () => void,
    position: Lsn | null,
  ) {
    this.position = position;
    this.#client = client;
    this.#schema = schema;
    this.#target = target;
    this.#onClose = onClose;
    // An idle client whose connection drops emits 'error'; unheard, it would crash the process.
    client.on('error', () => {
      this.#broken = true;
    });
  }

  async *readTable(request: TableReadRequest): AsyncGenerator<unknown[][], void, undefined> {
    checkSnapshotState(this.#state);
    const batchSize = checkReadRequest(request);
    const sql = postgresSelectSql(this.#schema, request.table, request.columns, request.where);
    const convert = postgresRowConverter(request.columns);
    const action = `reading table "${request.table}"`;
    const client = this.#client;
    this.#state = 'reading';

    // Only an error the server reported aborts the transaction and needs the savepoint back;
    // anything else (a value that fails to convert) leaves the cursor to be closed normally.
    let serverFailed = false;
    const fromServer = async <T>(work: Promise<T>): Promise<T> => {
      try {
        return await work;
      } catch (error) {
        serverFailed = true;
        throw error;
      }
    };
    let cursor: Cursor<unknown[]> | undefined;
    try {
      const Cursor = await loadPgCursor();
      await fromServer(client.query('SAVEPOINT replix_read'));
      // A cursor fetches `batchSize` rows per round trip: memory stays bounded by one batch.
      const open = client.query(
        new Cursor<unknown[]>(sql, undefined, { rowMode: 'array', types: TEXT_TYPES }),
      );
      cursor = open;
      while (true) {
        const rows = await fromServer(open.read(batchSize));
        if (rows.length === 0) return;
        for (const row of rows) convert(row);
        yield rows;
        // A short batch is the last one: no need for a round trip to learn that.
        if (rows.length < batchSize) return;
      }
    } catch (error) {
      throw sourceErrorFrom(error, this.#target, action);
    } finally {
      await this.#endRead(cursor, serverFailed);
    }
  }

  /** Puts the connection back in shape for the next read, or gives the snapshot up. */
  async #endRead(cursor: Cursor<unknown[]> | undefined, serverFailed: boolean): Promise<void> {
    if (this.#state === 'closed') return; // closed from outside while reading
    try {
      if (serverFailed) {
        // The error aborted the transaction; rolling back to the savepoint revives it with the
        // same snapshot (and drops the failed portal).
        await this.#client.query('ROLLBACK TO SAVEPOINT replix_read');
      } else {
        // Closing the portal is how a consumer that stops early abandons the rest of the table.
        await cursor?.close();
        await this.#client.query('RELEASE SAVEPOINT replix_read');
      }
      this.#state = 'open';
    } catch {
      this.#broken = true;
      await this.close();
    }
  }

  /** An exported snapshot lives as long as this transaction: nothing to release. */
  async joined(): Promise<void> {}

  async close(): Promise<void> {
    if (this.#state === 'closed') return;
    // Mid-read, COMMIT would queue behind the open cursor forever: just end the connection.
    const polite = !this.#broken && this.#state !== 'reading';
    this.#state = 'closed';
    this.#onClose();
    try {
      if (polite) await this.#client.query('COMMIT');
    } catch {
      // The snapshot is read-only: nothing is lost if the transaction is already gone.
    }
    try {
      await this.#client.end();
    } catch {
      // Already disconnected.
    }
  }
}

/** A snapshot exported by a replication slot as it was created, and the slot's start. */
export interface ExportedSnapshot {
  readonly snapshotName: string;
  /** The slot's consistent point: changes committed from here on are not in the snapshot. */
  readonly position: Lsn;
}

/** A new connection for a snapshot session, its session settings made. */
async function connectPostgres(
  options: PostgresConnectorOptions,
  tls: TlsNegotiation,
): Promise<pg.Client> {
  const { Client } = await loadPg();
  const client = await tls.connect(async (useTls) => {
    const opened = new Client({
      ...postgresConnectionConfig(options, useTls),
      types: TEXT_TYPES,
    });
    // Until the reader listens: an 'error' unheard would crash the process.
    opened.on('error', () => {});
    try {
      await opened.connect();
    } catch (error) {
      await opened.end().catch(() => {});
      throw error;
    }
    return opened;
  });
  try {
    await client.query(SNAPSHOT_SESSION_SQL);
  } catch (error) {
    await client.end().catch(() => {});
    throw error;
  }
  return client;
}

const BEGIN = 'BEGIN ISOLATION LEVEL REPEATABLE READ READ ONLY';

function setSnapshotSql(name: string): string {
  return `SET TRANSACTION SNAPSHOT '${name.replaceAll("'", "''")}'`;
}

/**
 * Opens a dedicated connection and starts a consistent, read-only snapshot on it: the database
 * as of now, or as of `exported`, a replication slot's snapshot, which the caller keeps alive
 * (its replication connection open) until this resolves. With `joiners`, the snapshot is
 * exported again from this reader's own transaction, which lives as long as the reader, so
 * joiners (`joinPostgresSnapshot`) can import it at any time until it closes.
 */
export async function openPostgresSnapshot(
  options: PostgresConnectorOptions,
  tls: TlsNegotiation,
  onClose: () => void = () => {},
  exported?: ExportedSnapshot,
  joiners = 0,
): Promise<PostgresSnapshotReader> {
  const target = postgresTarget(options);
  let client: pg.Client;
  try {
    client = await connectPostgres(options, tls);
  } catch (error) {
    throw sourceErrorFrom(error, target, 'opening a snapshot');
  }
  const schema = options.schema ?? 'public';
  const reader = new PostgresSnapshotReader(
    client,
    schema,
    target,
    onClose,
    exported?.position ?? null,
  );
  const begin = async () => {
    await client.query(BEGIN);
    if (exported) {
      // Must come before any other statement of the transaction: it replaces the snapshot the
      // first statement would take with the slot's, so the stream starts where the reads stand.
      await client.query(setSnapshotSql(exported.snapshotName));
    } else {
      // PostgreSQL takes a REPEATABLE READ snapshot at the transaction's first query, not at
      // BEGIN: this query pins it to now.
      await client.query('SELECT 1');
    }
  };
  try {
    await begin();
    if (joiners > 0) {
      reader.share = await exportSnapshot(client, options);
      // A refused export aborts the transaction (no savepoint: an export cannot run in one);
      // the snapshot is taken again, the slot's still being alive (see above).
      if (reader.share === null) {
        await client.query('ROLLBACK');
        await begin();
      }
    }
  } catch (error) {
    await client.end().catch(() => {});
    throw sourceErrorFrom(error, target, 'opening a snapshot');
  }
  return reader;
}

/**
 * The share of the snapshot `client`'s transaction holds; null if the server refuses it, which
 * aborts the transaction.
 */
async function exportSnapshot(
  client: pg.Client,
  options: PostgresConnectorOptions,
): Promise<PostgresSnapshotShare | null> {
  try {
    const result = await client.query<[string]>({
      text: 'SELECT pg_export_snapshot()',
      rowMode: 'array',
    });
    const name = result.rows[0]?.[0];
    return typeof name === 'string' ? { backend: 'postgres', options, snapshotName: name } : null;
  } catch {
    return null;
  }
}

/** Joins the snapshot a reader shared, on a session of its own (`SET TRANSACTION SNAPSHOT`). */
export async function joinPostgresSnapshot(
  share: PostgresSnapshotShare,
): Promise<PostgresSnapshotReader> {
  const { options } = share;
  const target = postgresTarget(options);
  let client: pg.Client;
  try {
    client = await connectPostgres(options, postgresTlsNegotiation(options));
  } catch (error) {
    throw sourceErrorFrom(error, target, 'joining a snapshot');
  }
  const reader = new PostgresSnapshotReader(
    client,
    options.schema ?? 'public',
    target,
    () => {},
    null,
  );
  try {
    await client.query(BEGIN);
    await client.query(setSnapshotSql(share.snapshotName));
  } catch (error) {
    await client.end().catch(() => {});
    throw sourceErrorFrom(error, target, 'joining a snapshot');
  }
  return reader;
}
