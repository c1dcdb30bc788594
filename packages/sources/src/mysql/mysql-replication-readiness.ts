import type { ReplicationReadiness } from '../replication.ts';

/** What `checkReplication` reads from a MySQL / MariaDB server. */
export interface MySqlReplicationFacts {
  readonly logBin: boolean;
  /** `binlog_format`: ROW, MIXED or STATEMENT. */
  readonly format: string | null;
  /** `binlog_row_image`: FULL, MINIMAL or NOBLOB; null on servers without it (always full). */
  readonly rowImage: string | null;
  readonly serverId: number | null;
  readonly binlogChecksum: string | null;
  /** Enough to read the binlog and its status (see `hasReplicationPrivileges`). */
  readonly replicationPrivileges: boolean;
  /** MySQL only (null on MariaDB): RELOAD, for the snapshot's FLUSH TABLES WITH READ LOCK. */
  readonly reloadPrivilege: boolean | null;
}

/**
 * Whether change data capture can run, with one sentence per problem saying what to change.
 * Row-based logging with full row images is what makes every change arrive as whole rows.
 */
export function mySqlReplicationReadiness(facts: MySqlReplicationFacts): ReplicationReadiness {
  const issues: string[] = [];
  if (!facts.logBin) {
    issues.push('Turn the binary log on: start the server with log_bin (it is OFF).');
  }
  const format = facts.format?.toUpperCase() ?? null;
  if (format !== 'ROW') {
    issues.push(`Set binlog_format=ROW (it is ${format ?? 'not set'}).`);
  }
  const rowImage = facts.rowImage?.toUpperCase() ?? null;
  if (rowImage !== null && rowImage !== 'FULL') {
    issues.push(`Set binlog_row_image=FULL (it is ${rowImage}).`);
  }
  if (!facts.replicationPrivileges) {
    issues.push(
      'Grant the user REPLICATION SLAVE and REPLICATION CLIENT (BINLOG MONITOR on MariaDB 10.5+) on *.*.',
    );
  }
  if (facts.reloadPrivilege === false) {
    issues.push(
      'Grant the user RELOAD on *.*: MySQL records a snapshot’s binlog position under FLUSH TABLES WITH READ LOCK.',
    );
  }
  return { ready: issues.length === 0, issues, facts: { ...facts } };
}
