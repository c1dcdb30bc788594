import type { Pool } from 'mysql2/promise';
import { mySqlFlavour } from './mysql-flavour.ts';
import { globalPrivileges, hasReloadPrivilege, hasReplicationPrivileges } from './mysql-grants.ts';
import type { MySqlReplicationFacts } from './mysql-replication-readiness.ts';

type Row = Record<string, unknown>;

// SHOW VARIABLES rather than @@names: a variable the server lacks (binlog_row_image before
// MySQL 5.6) is simply absent instead of failing the query.
const VARIABLES_SQL = `SHOW GLOBAL VARIABLES WHERE Variable_name IN
  ('log_bin', 'binlog_format', 'binlog_row_image', 'server_id', 'binlog_checksum', 'version')`;

/** Reads the settings and privileges change data capture depends on. */
export async function readMySqlReplicationFacts(pool: Pool): Promise<MySqlReplicationFacts> {
  const [[variableRows], [grantRows]] = await Promise.all([
    pool.query(VARIABLES_SQL) as Promise<[Row[], unknown]>,
    pool.query('SHOW GRANTS') as Promise<[Row[], unknown]>,
  ]);
  const variables = new Map<string, string>();
  for (const row of variableRows) {
    variables.set(String(row.Variable_name).toLowerCase(), String(row.Value));
  }
  // Each row has one column, named after the account ("Grants for app@%").
  const privileges = globalPrivileges(grantRows.map((row) => String(Object.values(row)[0])));
  const serverId = variables.has('server_id') ? Number(variables.get('server_id')) : null;
  const mariaDb = mySqlFlavour(variables.get('version') ?? '').mariaDb;
  return {
    logBin: variables.get('log_bin')?.toUpperCase() === 'ON',
    format: variables.get('binlog_format') ?? null,
    rowImage: variables.get('binlog_row_image') ?? null,
    serverId: Number.isFinite(serverId) ? serverId : null,
    binlogChecksum: variables.get('binlog_checksum') ?? null,
    replicationPrivileges: hasReplicationPrivileges(privileges),
    reloadPrivilege: mariaDb ? null : hasReloadPrivilege(privileges),
  };
}
