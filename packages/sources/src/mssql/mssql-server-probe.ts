import type { ChangeLogReadiness, ServerProbe } from '../server-probe.ts';
import { optional, timed } from '../server-probe.ts';
import type { SourceTlsMode } from '../source-dialect.ts';
import {
  type MsSqlConnectorOptions,
  msSqlConfig,
  msSqlTarget,
} from './mssql-connection-options.ts';
import { loadMssql } from './mssql-driver.ts';
import { msSqlErrorFrom } from './mssql-errors.ts';
import { endMsSqlPool } from './mssql-pool.ts';
import { msSqlQuery } from './mssql-query.ts';
import { checkMsSqlReplication } from './mssql-replication.ts';

/** Databases the login may use; ids 1..4 are master, tempdb, model and msdb. */
const DATABASES_SQL = `
SELECT name FROM sys.databases
WHERE database_id > 4 AND state_desc = N'ONLINE' AND HAS_DBACCESS(name) = 1`;

/** Reserved pages of the database logged in to (data plus indexes), in bytes. */
const SIZE_SQL = `SELECT CAST(SUM(reserved_page_count) AS bigint) * 8192 AS bytes
FROM sys.dm_db_partition_stats`;

/** Everything but `disable` encrypts; only `verify-full` checks the certificate. */
export function msSqlTlsOptions(
  tls: SourceTlsMode | undefined,
): Pick<MsSqlConnectorOptions, 'encrypt' | 'trustServerCertificate'> {
  const mode = tls ?? 'prefer';
  return { encrypt: mode !== 'disable', trustServerCertificate: mode !== 'verify-full' };
}

/**
 * SQL Server's change log is change data capture, enabled per database: `logBin` says whether
 * CDC is on in the database logged in to, `format` is `cdc`, and `ready` also needs SQL Server
 * Agent (when it can be told) and read access to the cdc schema. Per-table capture is checked
 * when a database is built, since the tables are not chosen yet.
 */
export function msSqlChangeLog(
  facts: Readonly<Record<string, unknown>>,
  issues: readonly string[],
): ChangeLogReadiness {
  const databaseIssues = issues.filter((issue) => !issue.startsWith('Enable CDC for table'));
  return {
    logBin: facts.cdcEnabled === true,
    format: 'cdc',
    serverId: null,
    ready: databaseIssues.length === 0,
    issues: databaseIssues,
  };
}

/**
 * SQL Server: logs in to `database` (default `master`), lists the user databases the login may
 * use, sizes the database logged in to, and checks its change data capture.
 */
export const msSqlServerProbe: ServerProbe = {
  backend: 'mssql',
  async probe(target) {
    const options: MsSqlConnectorOptions = {
      host: target.host,
      port: target.port,
      user: target.user,
      password: target.password,
      database: target.database ?? 'master',
      ...msSqlTlsOptions(target.tls?.mode),
    };
    const pool = new (await loadMssql()).ConnectionPool(
      msSqlConfig(options, { maxConnections: 1, requestTimeout: 30_000 }),
    );
    pool.on('error', () => {});
    try {
      await pool.connect();
      const latencyMs = await timed(() => msSqlQuery(pool, 'SELECT 1 AS one'));
      const rows = await msSqlQuery(pool, DATABASES_SQL);
      const availableSchemas = rows.map((row) => String(row.name)).sort();
      const estimatedSizeBytes = await optional(async () => {
        const [row] = await msSqlQuery(pool, SIZE_SQL);
        const bytes = Number(row?.bytes);
        return Number.isFinite(bytes) ? bytes : undefined;
      });
      const readiness = await checkMsSqlReplication(pool, 'dbo', target.user);
      return {
        latencyMs,
        estimatedSizeBytes,
        availableSchemas,
        changeLog: msSqlChangeLog(readiness.facts, readiness.issues),
      };
    } catch (error) {
      throw msSqlErrorFrom(error, msSqlTarget(options), 'checking the server');
    } finally {
      await endMsSqlPool(pool);
    }
  },
};
