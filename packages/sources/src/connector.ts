import type { SourceColumn, SourceSchema } from '@replix/engine';

export type SourceEngine = 'mysql' | 'postgres';

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
   * Streams the table's rows in batches; a row is an array of values in `columns` order, each
   * in its column type's canonical form (see `ColumnType`). Never holds the whole table.
   */
  readTable(request: TableReadRequest): AsyncIterable<unknown[][]>;
  /**
   * Ends the snapshot transaction and its connection. Safe to call twice. Reads run one at a
   * time: a reader streams one table, then the next.
   */
  close(): Promise<void>;
}

/** Everything the engine needs from a source database, whatever its engine. */
export interface SourceConnector {
  readonly engine: SourceEngine;
  /** Base tables of the connection's database (MySQL) or schema (PostgreSQL). */
  introspect(): Promise<SourceSchema>;
  /** Opens a dedicated connection holding a consistent, read-only snapshot transaction. */
  openSnapshot(): Promise<SnapshotReader>;
  /** Closes the connector's pool and any snapshot reader still open. */
  close(): Promise<void>;
}
