import type { SourceSchema } from '@replix/engine';
import type { ConnectionPool } from 'mssql';
import type { SnapshotOptions, SnapshotReader, SourceConnector } from '../connector.ts';
import type {
  ChangeBatch,
  ChangeStreamRequest,
  ReplicationPosition,
  ReplicationReadiness,
} from '../replication.ts';
import type { RowsRequest } from '../rows-request.ts';
import { streamMsSqlChanges } from './mssql-change-stream.ts';
import {
  type MsSqlConnectorOptions,
  msSqlConfig,
  msSqlTarget,
} from './mssql-connection-options.ts';
import { loadMssql } from './mssql-driver.ts';
import { msSqlErrorFrom } from './mssql-errors.ts';
import { introspectMsSql } from './mssql-introspector.ts';
import { endMsSqlPool } from './mssql-pool.ts';
import { MsSqlLsn } from './mssql-position.ts';
import { readMsSqlRows } from './mssql-read-rows.ts';
import { checkMsSqlReplication } from './mssql-replication.ts';
import { openMsSqlSnapshot } from './mssql-snapshot.ts';

/**
 * One schema of a SQL Server database as a Replix source, through mssql on tedious. Change data
 * capture reads SQL Server's own CDC change tables, which the DBA enables and SQL Server Agent
 * fills and cleans up: the connector creates nothing on the server, so acknowledging a position
 * and dropping replication have nothing to do.
 */
export class MsSqlConnector implements SourceConnector {
  readonly backend = 'mssql';
  /** CDC captures cascaded changes like any other. */
  readonly changesIncludeForeignKeyActions = true;
  readonly snapshotShareable = false;
  readonly #options: MsSqlConnectorOptions;
  readonly #readers = new Set<SnapshotReader>();
  #pool: Promise<ConnectionPool> | undefined;

  constructor(options: MsSqlConnectorOptions) {
    this.#options = options;
  }

  /** The schema whose tables this connector reads. */
  get schema(): string {
    return this.#options.schema ?? 'dbo';
  }

  /** A small pool for metadata queries, connected on first use; snapshots never borrow from it. */
  #metadataPool(): Promise<ConnectionPool> {
    if (this.#pool === undefined) {
      const options = msSqlConfig(this.#options, { maxConnections: 2, requestTimeout: 120_000 });
      const connected = loadMssql().then((driver) => {
        const pool = new driver.ConnectionPool(options);
        // A pooled connection failing while idle is reported on the pool; unheard, it would
        // crash the process. The pool replaces the connection, and the next query reconnects.
        pool.on('error', () => {});
        return pool.connect();
      });
      this.#pool = connected;
      // A failed connect leaves nothing worth keeping: the next call tries afresh.
      connected.catch(() => {
        if (this.#pool === connected) this.#pool = undefined;
      });
    }
    return this.#pool;
  }

  async introspect(): Promise<SourceSchema> {
    try {
      return await introspectMsSql(await this.#metadataPool(), this.schema);
    } catch (error) {
      throw msSqlErrorFrom(error, msSqlTarget(this.#options), 'introspecting the schema');
    }
  }

  /** Current rows by primary key or change column (see `RowsRequest`), outside any snapshot. */
  async readRows(request: RowsRequest): Promise<unknown[][]> {
    try {
      return await readMsSqlRows(await this.#metadataPool(), this.schema, request);
    } catch (error) {
      throw msSqlErrorFrom(
        error,
        msSqlTarget(this.#options),
        `reading rows of table "${request.table}"`,
      );
    }
  }

  async openSnapshot(options: SnapshotOptions = {}): Promise<SnapshotReader> {
    let reader: SnapshotReader | undefined;
    reader = await openMsSqlSnapshot(this.#options, options, () => {
      if (reader) this.#readers.delete(reader);
    });
    this.#readers.add(reader);
    return reader;
  }

  async checkReplication(): Promise<ReplicationReadiness> {
    try {
      return await checkMsSqlReplication(
        await this.#metadataPool(),
        this.schema,
        this.#options.user,
      );
    } catch (error) {
      throw msSqlErrorFrom(error, msSqlTarget(this.#options), 'checking change data capture');
    }
  }

  streamChanges(request: ChangeStreamRequest): AsyncIterable<ChangeBatch> {
    return streamMsSqlChanges(this.#options, request);
  }

  /**
   * Nothing to confirm: CDC keeps changes for its retention period (three days by default) and
   * its cleanup job removes them whether or not anyone read them. Checks the position's backend.
   */
  async acknowledge(position: ReplicationPosition): Promise<void> {
    MsSqlLsn.from(position);
  }

  positionFromString(text: string): ReplicationPosition {
    return MsSqlLsn.parse(text);
  }

  /**
   * Nothing to drop: the capture instances are the DBA's (`sys.sp_cdc_disable_table`), and other
   * consumers may read them too.
   */
  async dropReplication(): Promise<void> {}

  async close(): Promise<void> {
    const pool = this.#pool;
    this.#pool = undefined;
    const readers = [...this.#readers];
    await Promise.allSettled([
      ...readers.map((reader) => reader.close()),
      pool?.then((connected) => endMsSqlPool(connected)),
    ]);
  }
}
