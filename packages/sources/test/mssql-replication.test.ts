import { describe, expect, it } from 'vitest';
import {
  ENABLE_CDC_ISSUE,
  enableTableIssue,
  grantCdcIssue,
  type MsSqlReplicationFacts,
  msSqlReadiness,
  START_AGENT_ISSUE,
} from '../src/mssql/mssql-replication.ts';

const ready: MsSqlReplicationFacts = {
  cdcEnabled: true,
  capturedTables: 2,
  sqlAgentRunning: true,
  snapshotIsolation: true,
  cdcReadable: true,
};

describe('msSqlReadiness', () => {
  it('is ready with CDC on, every table captured, Agent running and cdc readable', () => {
    expect(msSqlReadiness(ready, [], 'dbo', 'replix')).toEqual({
      ready: true,
      issues: [],
      facts: {
        cdcEnabled: true,
        capturedTables: 2,
        sqlAgentRunning: true,
        snapshotIsolation: true,
        cdcReadable: true,
      },
    });
  });

  it('says how to enable CDC on the database and on each table', () => {
    const readiness = msSqlReadiness(
      { ...ready, cdcEnabled: false, capturedTables: 0, cdcReadable: null },
      ['orders', "o'brien"],
      'dbo',
      'replix',
    );
    expect(readiness.ready).toBe(false);
    expect(readiness.issues).toEqual([
      'Enable CDC: EXEC sys.sp_cdc_enable_db (run in the source database by a member of sysadmin).',
      "Enable CDC for table [dbo].[orders]: EXEC sys.sp_cdc_enable_table @source_schema = N'dbo', @source_name = N'orders', @role_name = NULL.",
      "Enable CDC for table [dbo].[o'brien]: EXEC sys.sp_cdc_enable_table @source_schema = N'dbo', @source_name = N'o''brien', @role_name = NULL.",
    ]);
    expect(readiness.issues[0]).toBe(ENABLE_CDC_ISSUE);
    expect(readiness.issues[1]).toBe(enableTableIssue('dbo', 'orders'));
  });

  it('asks for SQL Server Agent only when it is known to be stopped', () => {
    expect(msSqlReadiness({ ...ready, sqlAgentRunning: false }, [], 'dbo', 'u').issues).toEqual([
      START_AGENT_ISSUE,
    ]);
    expect(msSqlReadiness({ ...ready, sqlAgentRunning: null }, [], 'dbo', 'u').ready).toBe(true);
  });

  it('asks for read access to the cdc schema', () => {
    expect(msSqlReadiness({ ...ready, cdcReadable: false }, [], 'dbo', 'app]x').issues).toEqual([
      grantCdcIssue('app]x'),
    ]);
    expect(grantCdcIssue('replix')).toBe(
      'Let the user read change data: GRANT SELECT ON SCHEMA::cdc TO [replix].',
    );
  });

  it('reports snapshot isolation as a fact, not an issue', () => {
    const readiness = msSqlReadiness({ ...ready, snapshotIsolation: false }, [], 'dbo', 'u');
    expect(readiness.ready).toBe(true);
    expect(readiness.facts.snapshotIsolation).toBe(false);
  });
});
