import type { ConnectionPool } from 'mssql';
import type { ReplicationReadiness } from '../replication.ts';
import { byName } from '../sort-by-name.ts';
import { msSqlQuery, nameParameter } from './mssql-query.ts';
import { msSqlStringLiteral, quoteMsSqlIdentifier } from './mssql-sql.ts';

/**
 * Whether a SQL Server database is set up for change data capture, and the T-SQL to run where
 * it is not. CDC needs the database enabled (by a sysadmin), each followed table enabled (by a
 * db_owner), SQL Server Agent to run the capture job that copies the log into the change
 * tables, and a user who may read the cdc schema.
 */

export const ENABLE_CDC_ISSUE =
  'Enable CDC: EXEC sys.sp_cdc_enable_db (run in the source database by a member of sysadmin).';

export const START_AGENT_ISSUE =
  'Start SQL Server Agent: the CDC capture job that copies changes from the log runs under it.';

export const CAPTURE_JOB_ISSUE =
  'The CDC capture job has not run yet: start SQL Server Agent, or the job with EXEC sys.sp_cdc_start_job.';

export function enableTableIssue(schema: string, table: string): string {
  return (
    `Enable CDC for table ${quoteMsSqlIdentifier(schema)}.${quoteMsSqlIdentifier(table)}: ` +
    `EXEC sys.sp_cdc_enable_table @source_schema = ${msSqlStringLiteral(schema)}, ` +
    `@source_name = ${msSqlStringLiteral(table)}, @role_name = NULL.`
  );
}

export function grantCdcIssue(user: string): string {
  return `Let the user read change data: GRANT SELECT ON SCHEMA::cdc TO ${quoteMsSqlIdentifier(user)}.`;
}

export interface MsSqlReplicationFacts {
  readonly cdcEnabled: boolean;
  /** Base tables of the schema with a capture instance. */
  readonly capturedTables: number;
  /** Null when it cannot be told: no VIEW SERVER STATE, or Azure SQL Database (no Agent). */
  readonly sqlAgentRunning: boolean | null;
  /** ALLOW_SNAPSHOT_ISOLATION is ON: snapshots are consistent without locking (see `mssql-snapshot.ts`). */
  readonly snapshotIsolation: boolean;
  /** SELECT on cdc.lsn_time_mapping; null while CDC is off (the cdc schema does not exist). */
  readonly cdcReadable: boolean | null;
}

/** The verdict from the facts: one issue per thing to change, ready when there is none. */
export function msSqlReadiness(
  facts: MsSqlReplicationFacts,
  uncapturedTables: readonly string[],
  schema: string,
  user: string,
): ReplicationReadiness {
  const issues: string[] = [];
  if (!facts.cdcEnabled) issues.push(ENABLE_CDC_ISSUE);
  for (const table of uncapturedTables) issues.push(enableTableIssue(schema, table));
  if (facts.sqlAgentRunning === false) issues.push(START_AGENT_ISSUE);
  if (facts.cdcEnabled && facts.cdcReadable === false) issues.push(grantCdcIssue(user));
  return { ready: issues.length === 0, issues, facts: { ...facts } };
}

const DATABASE_SQL = `
SELECT d.is_cdc_enabled, d.snapshot_isolation_state,
  CAST(SERVERPROPERTY('EngineEdition') AS int) AS engine_edition,
  HAS_PERMS_BY_NAME(N'cdc.lsn_time_mapping', N'OBJECT', N'SELECT') AS cdc_readable,
  HAS_PERMS_BY_NAME(NULL, NULL, N'VIEW SERVER STATE') AS view_server_state
FROM sys.databases AS d
WHERE d.database_id = DB_ID()`;

const TABLES_SQL = `
SELECT t.name AS table_name, t.is_tracked_by_cdc
FROM sys.tables AS t
WHERE t.schema_id = SCHEMA_ID(@schema) AND t.is_ms_shipped = 0`;

// Agent keeps sessions open while it runs ("SQLAgent - Generic Refresher", "… Job invocation
// engine"); without VIEW SERVER STATE only the user's own sessions are visible, so the count
// would say nothing and is not taken.
const AGENT_SESSIONS_SQL = `
SELECT COUNT(*) AS sessions FROM sys.dm_exec_sessions WHERE program_name LIKE N'SQLAgent - %'`;

/** Azure SQL Database runs CDC on its own scheduler and has no SQL Server Agent. */
const AZURE_SQL_DATABASE = 5;

export async function checkMsSqlReplication(
  pool: ConnectionPool,
  schema: string,
  user: string,
): Promise<ReplicationReadiness> {
  const [[database], tables] = await Promise.all([
    msSqlQuery(pool, DATABASE_SQL),
    msSqlQuery(pool, TABLES_SQL, [nameParameter('schema', schema)]),
  ]);
  let sqlAgentRunning: boolean | null = null;
  if (database?.view_server_state === 1 && database.engine_edition !== AZURE_SQL_DATABASE) {
    const [sessions] = await msSqlQuery(pool, AGENT_SESSIONS_SQL);
    sqlAgentRunning = Number(sessions?.sessions) > 0;
  }
  const readable = database?.cdc_readable;
  const facts: MsSqlReplicationFacts = {
    cdcEnabled: database?.is_cdc_enabled === true,
    capturedTables: tables.filter((row) => row.is_tracked_by_cdc === true).length,
    sqlAgentRunning,
    snapshotIsolation: database?.snapshot_isolation_state === 1,
    cdcReadable: readable === null || readable === undefined ? null : readable === 1,
  };
  const uncaptured = tables
    .filter((row) => row.is_tracked_by_cdc !== true)
    .map((row) => String(row.table_name))
    .sort(byName);
  return msSqlReadiness(facts, uncaptured, schema, user);
}
