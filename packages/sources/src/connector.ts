import type { SourceColumn, SourceSchema } from '@replix/engine';
import type {
  ChangeBatch,
  ChangeStreamRequest,
  ReplicationPosition,
  ReplicationReadiness,
} from './replication.ts';
import type { RowsRequest } from './rows-request.ts';
import type { SnapshotShare } from './snapshot-share.ts';
import type { SourceBackend } from './source-dialect.ts';

export type { SourceBackend };

/** One table to read during a snapshot. */
export interface TableReadRequest {
  readonly table: string;
  /** The columns to read, in the order each delivered row lists its values. */
  readonly columns: readonly SourceColumn[];
  /** A SQL predicate from the schema config, baked into the snapshot; trusted config text. */
  readonly where?: string | undefined;
  /** Rows per delivered batch (default 5000). */
  readonly batchSize?: number | undefined;
}

/**
 * A consistent, read-only view of the source: every table read through one reader sees the
 * same point in time (a consistent-snapshot transaction).
 */
export interface SnapshotReader {
  /**
   * With `withPosition`: the change-history position this snapshot corresponds to, so that a
   * change stream started there misses and repeats nothing. Null otherwise.
   */
  readonly position: ReplicationPosition | null;
  /**
   * Streams the table's rows in batches; a row is an array of values in `columns` order, each
   * in its column type's canonical form (see `ColumnType`). Never holds the whole table.
   */
  readTable(request: TableReadRequest): AsyncIterable<unknown[][]>;
  /**
   * Ends the snapshot transaction and its connection. Safe to call twice. Reads run one at a
   * time: a reader streams one table, then the next.
   */
  close(): Promise<void>;
  /**
   * With `joiners`: plain, structured-cloneable data from which `joinSnapshot` (on any thread)
   * opens another session reading this very snapshot, so tables can be read in parallel. Null
   * without `joiners`, or when the source or its user cannot share a snapshot: one reader then
   * reads everything.
   */
  readonly share: SnapshotShare | null;
  /**
   * Every joiner has joined (or given up): releases what the source held for them (MySQL's
   * table locks). Safe to call twice; `close` does it too.
   */
  joined(): Promise<void>;
}

export interface SnapshotOptions {
  /**
   * Capture the position for change data capture. MySQL/MariaDB: the binlog position of the
   * consistent snapshot. PostgreSQL: (re)creates the publication for `tables` and the
   * replication slot, and reads through the slot's exported snapshot.
   */
  readonly withPosition?: boolean;
  /** Source names of the tables to be followed (PostgreSQL's publication). */
  readonly tables?: readonly string[];
  /**
   * How many other sessions will join the snapshot through `SnapshotReader.share` (0 by
   * default: none, no share).
   */
  readonly joiners?: number;
  /**
   * Source names of every table and view that will be read. MySQL / MariaDB lock them against
   * writes (`LOCK TABLES … READ`) from the snapshot's start until `joined`, so that every
   * joiner's snapshot sees the same commits; without them, or without the privilege, no share.
   */
  readonly reads?: readonly string[];
}

/** Everything the engine needs from a source database, whatever its backend. */
export interface SourceConnector {
  readonly backend: SourceBackend;
  /**
   * Whether the change stream carries the rows a foreign key's ON DELETE / ON UPDATE action
   * changes. PostgreSQL's logical replication and SQL Server's CDC do; MySQL/MariaDB's binary
   * log does not (InnoDB applies them below the log), so the follower derives them itself.
   */
  readonly changesIncludeForeignKeyActions: boolean;
  /**
   * Whether other sessions may join a snapshot it opens, so a load reads tables in parallel:
   * MySQL/MariaDB and PostgreSQL may (`SnapshotReader.share` is still null when this one cannot,
   * for a MySQL user without LOCK TABLES); SQL Server never does, and no load worker waits for it.
   */
  readonly snapshotShareable: boolean;
  /** Base tables of the connection's database (MySQL) or schema (PostgreSQL). */
  introspect(): Promise<SourceSchema>;
  /** Opens a dedicated connection holding a consistent, read-only snapshot transaction. */
  openSnapshot(options?: SnapshotOptions): Promise<SnapshotReader>;
  /** Checks the source's settings and privileges for change data capture. */
  checkReplication(): Promise<ReplicationReadiness>;
  /**
   * Streams committed changes from `request.from`. Fails with `PositionExpiredError` when the
   * history needed is gone (binlog purged, slot lost), and with a connection error when the
   * source goes away; the caller reconnects from its last applied position.
   */
  streamChanges(request: ChangeStreamRequest): AsyncIterable<ChangeBatch>;
  /**
   * Everything up to `position` is applied: PostgreSQL confirms the flushed LSN so the source
   * can recycle WAL; MySQL/MariaDB need nothing.
   */
  acknowledge(position: ReplicationPosition): Promise<void>;
  positionFromString(text: string): ReplicationPosition;
  /**
   * Current rows outside any snapshot, by primary key or change column, within the table's
   * `where` (see `RowsRequest`); values in the same canonical forms as a snapshot's.
   */
  readRows(request: RowsRequest): Promise<unknown[][]>;
  /** Removes what replication keeps on the source (PostgreSQL: slot and publication). */
  dropReplication(): Promise<void>;
  /** Closes the connector's pool and any snapshot reader still open. */
  close(): Promise<void>;
}
