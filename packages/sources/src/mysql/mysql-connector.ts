import type { SourceSchema } from '@replix/engine';
import type { Pool } from 'mysql2/promise';
import type { SnapshotOptions, SnapshotReader, SourceConnector } from '../connector.ts';
import { sourceErrorFrom } from '../errors.ts';
import type {
  ChangeBatch,
  ChangeStreamRequest,
  ReplicationPosition,
  ReplicationReadiness,
} from '../replication.ts';
import type { RowsRequest } from '../rows-request.ts';
import type { TlsNegotiation } from '../source-tls.ts';
import { loadBinlogClient } from './mysql-binlog-client.ts';
import { mySqlBinlogStream } from './mysql-binlog-stream.ts';
import {
  type MySqlConnectorOptions,
  mySqlConnectionOptions,
  mySqlTarget,
  mySqlTlsNegotiation,
} from './mysql-connection-options.ts';
import { loadMysql2 } from './mysql-driver.ts';
import { introspectMySql } from './mysql-introspector.ts';
import { BinlogPosition } from './mysql-position.ts';
import { readMySqlRows } from './mysql-read-rows.ts';
import { readMySqlReplicationFacts } from './mysql-replication-facts.ts';
import { mySqlReplicationReadiness } from './mysql-replication-readiness.ts';
import { openMySqlSnapshot } from './mysql-snapshot.ts';

/** A MySQL or MariaDB database as a Replix source. */
export class MySqlConnector implements SourceConnector {
  readonly backend = 'mysql';
  /** InnoDB applies foreign-key actions below the binary log. */
  readonly changesIncludeForeignKeyActions = false;
  readonly snapshotShareable = true;
  readonly #options: MySqlConnectorOptions;
  readonly #tls: TlsNegotiation;
  readonly #readers = new Set<SnapshotReader>();
  /** How to end each running change stream. */
  readonly #streams = new Set<() => void>();
  #pool: Promise<Pool> | undefined;

  constructor(options: MySqlConnectorOptions) {
    this.#options = options;
    this.#tls = mySqlTlsNegotiation(options);
  }

  /**
   * A small pool for metadata queries and row reads, made on first use; snapshots never borrow
   * from it. Its sessions run in UTC, as the snapshot's do, so TIMESTAMPs read the same.
   */
  #metadataPool(): Promise<Pool> {
    if (!this.#pool) {
      const created = loadMysql2().then((mysql) =>
        this.#tls.pool(
          (useTls) => {
            const pool = mysql.createPool({
              ...mySqlConnectionOptions(this.#options, useTls),
              connectionLimit: 2,
            });
            pool.on('connection', (connection) => {
              // A failure here surfaces through the first query on the connection.
              connection.query("SET time_zone = '+00:00'", () => {});
            });
            return pool.promise();
          },
          (pool) => pool.query('SELECT 1'),
          (pool) => pool.end(),
        ),
      );
      // A pool that could not be made (server down) is tried again by the next call.
      created.catch(() => {
        if (this.#pool === created) this.#pool = undefined;
      });
      this.#pool = created;
    }
    return this.#pool;
  }

  /** Current rows by primary key or change column (see `RowsRequest`). */
  async readRows(request: RowsRequest): Promise<unknown[][]> {
    try {
      return await readMySqlRows(await this.#metadataPool(), request);
    } catch (error) {
      throw sourceErrorFrom(
        error,
        mySqlTarget(this.#options),
        `reading rows of table "${request.table}"`,
      );
    }
  }

  async introspect(): Promise<SourceSchema> {
    try {
      return await introspectMySql(await this.#metadataPool());
    } catch (error) {
      throw sourceErrorFrom(error, mySqlTarget(this.#options), 'introspecting the schema');
    }
  }

  async openSnapshot(options: SnapshotOptions = {}): Promise<SnapshotReader> {
    let reader: SnapshotReader | undefined;
    reader = await openMySqlSnapshot(
      this.#options,
      this.#tls,
      () => {
        if (reader) this.#readers.delete(reader);
      },
      options,
    );
    this.#readers.add(reader);
    return reader;
  }

  async checkReplication(): Promise<ReplicationReadiness> {
    try {
      // Only a source checked for CDC follows its binlog: its client library loads now, before
      // the instance serves, rather than with the first change stream.
      const [facts] = await Promise.all([
        readMySqlReplicationFacts(await this.#metadataPool()),
        loadBinlogClient(),
      ]);
      return mySqlReplicationReadiness(facts);
    } catch (error) {
      throw sourceErrorFrom(error, mySqlTarget(this.#options), 'checking replication settings');
    }
  }

  streamChanges(request: ChangeStreamRequest): AsyncIterable<ChangeBatch> {
    return mySqlBinlogStream(
      {
        options: this.#options,
        tls: this.#tls,
        pool: () => this.#metadataPool(),
        attach: (end) => {
          this.#streams.add(end);
          return () => this.#streams.delete(end);
        },
      },
      request,
    );
  }

  /**
   * Nothing to do: the server keeps binlogs by its own retention (binlog_expire_logs_seconds,
   * expire_logs_days), whatever its readers have applied; a reader holds nothing on it.
   */
  async acknowledge(_position: ReplicationPosition): Promise<void> {}

  positionFromString(text: string): BinlogPosition {
    return BinlogPosition.parse(text);
  }

  /** Nothing to remove: reading the binlog creates nothing on the source (no slot, no replica). */
  async dropReplication(): Promise<void> {}

  async close(): Promise<void> {
    const pool = this.#pool;
    this.#pool = undefined;
    for (const end of [...this.#streams]) end();
    const readers = [...this.#readers];
    await Promise.allSettled([
      ...readers.map((reader) => reader.close()),
      pool?.then((opened) => opened.end()),
    ]);
  }
}
