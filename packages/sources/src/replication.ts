import type { SourceColumn } from '@replix/engine';
import type { SourceBackend } from './source-dialect.ts';

/**
 * A point in a source's change history (a MariaDB/MySQL binlog file and offset; a PostgreSQL
 * LSN; a SQL Server log sequence number). Value objects: compare them, serialise them; the
 * serialised form sorts as a string in history order, so the rest of the system never parses
 * backend formats.
 */
export interface ReplicationPosition {
  readonly backend: SourceBackend;
  /** Negative, zero or positive as this position is before, at or after `other`. */
  compare(other: ReplicationPosition): number;
  /** Sorts as a string in history order; the connector's `positionFromString` reads it back. */
  serialize(): string;
  /**
   * For logs: the backend's own notation (`mysql-bin.000003:1234`, `0/16B3748`,
   * `0000002A:000001C8:0003`).
   */
  toString(): string;
}

/**
 * Whether the source is set up for change data capture, with the facts behind the answer.
 * MySQL/MariaDB: `logBin`, `format`, `rowImage`, `serverId`, `privileges`; PostgreSQL:
 * `walLevel`, `maxReplicationSlots`, `freeReplicationSlots`, `replicationPrivilege`.
 */
export interface ReplicationReadiness {
  readonly ready: boolean;
  /** One sentence per problem, saying what to change: "Set binlog_format=ROW (it is MIXED)." */
  readonly issues: readonly string[];
  readonly facts: Readonly<Record<string, string | number | boolean | null>>;
}

/**
 * One row change, rows in the order of the table's requested columns with canonical values
 * (see `ColumnType`). `table` is the source table name.
 *
 * - `update.before` holds at least the primary-key columns of the row as it was; the source may
 *   leave the other columns `undefined` (PostgreSQL with REPLICA IDENTITY DEFAULT), and it is
 *   null when the source sends no old image because the key did not change.
 * - `update.after` may leave a column `undefined` when its value did not change and the source
 *   did not resend it (PostgreSQL unchanged TOAST values): keep the old value.
 * - `schemaChange`: the table's columns in the stream no longer match the requested ones
 *   (column added, dropped or retyped, table dropped); its changes are skipped from here on.
 */
export type SourceChange =
  | { readonly op: 'insert'; readonly table: string; readonly row: readonly unknown[] }
  | {
      readonly op: 'update';
      readonly table: string;
      readonly before: readonly unknown[] | null;
      readonly after: readonly unknown[];
    }
  | { readonly op: 'delete'; readonly table: string; readonly row: readonly unknown[] }
  | { readonly op: 'truncate'; readonly table: string }
  | { readonly op: 'schemaChange'; readonly table: string; readonly detail: string };

/** Changes of whole committed transactions, in commit order. */
export interface ChangeBatch {
  readonly changes: readonly SourceChange[];
  /** The position just after the batch's last transaction: resuming from it replays none of it. */
  readonly position: ReplicationPosition;
}

export interface ChangeStreamRequest {
  /** The tables to follow, each with the columns (and their order) its rows are delivered in. */
  readonly tables: readonly { readonly table: string; readonly columns: readonly SourceColumn[] }[];
  /** Where to start: a snapshot's position, or the last position applied. */
  readonly from: ReplicationPosition;
  /** Authoritative: when it aborts, the stream ends (the iterator returns) and its connection closes. */
  readonly signal: AbortSignal;
}
