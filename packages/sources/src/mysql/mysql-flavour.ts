/**
 * What differs between the servers behind a `mysql://` URL, as capability flags read once from
 * `SELECT VERSION()`, so the rest of the connector never compares version strings.
 */
export interface MySqlFlavour {
  readonly mariaDb: boolean;
  /**
   * How a snapshot learns its binlog position. MariaDB reports it for the consistent snapshot
   * itself (`binlog_snapshot_*` status), without locks; MySQL needs writes held still with
   * `FLUSH TABLES WITH READ LOCK` while the snapshot starts and the position is read.
   */
  readonly snapshotPosition: 'snapshot-status' | 'read-lock';
  /** MySQL 8.2 renamed SHOW MASTER STATUS (removed in 8.4); MariaDB keeps the old name. */
  readonly binlogStatusSql: 'SHOW MASTER STATUS' | 'SHOW BINARY LOG STATUS';
}

/** Reads a `VERSION()` text such as `10.11.6-MariaDB-0+deb12u1-log` or `8.4.0`. */
export function mySqlFlavour(version: string): MySqlFlavour {
  const mariaDb = /mariadb/i.test(version);
  const [major = 0, minor = 0] = (/^(\d+)\.(\d+)/.exec(version) ?? []).slice(1).map(Number);
  const renamed = !mariaDb && (major > 8 || (major === 8 && minor >= 2));
  return {
    mariaDb,
    snapshotPosition: mariaDb ? 'snapshot-status' : 'read-lock',
    binlogStatusSql: renamed ? 'SHOW BINARY LOG STATUS' : 'SHOW MASTER STATUS',
  };
}
