import type { MySqlConnectorOptions } from './mysql/mysql-connection-options.ts';
import type { PostgresConnectorOptions } from './postgres/postgres-connection-options.ts';

/**
 * What another session needs to read the same consistent snapshot as a `SnapshotReader`
 * (see `SnapshotReader.share`): plain data, so it crosses to a worker thread by `postMessage`.
 * It holds the connection's password: it never leaves the process.
 */
export type SnapshotShare = MySqlSnapshotShare | PostgresSnapshotShare;

/**
 * MySQL / MariaDB have no snapshot to export: a joiner starts its own consistent snapshot
 * while the sharing reader's table locks keep every commit to the tables read out, so it sees
 * what the sharing reader sees.
 */
export interface MySqlSnapshotShare {
  readonly backend: 'mysql';
  readonly options: MySqlConnectorOptions;
}

/** PostgreSQL: a joiner imports the snapshot the sharing reader exported (`pg_export_snapshot`). */
export interface PostgresSnapshotShare {
  readonly backend: 'postgres';
  readonly options: PostgresConnectorOptions;
  readonly snapshotName: string;
}
