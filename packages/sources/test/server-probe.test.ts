import { describe, expect, it } from 'vitest';
import {
  ENABLE_CDC_ISSUE,
  enableTableIssue,
  START_AGENT_ISSUE,
} from '../src/mssql/mssql-replication.ts';
import { msSqlChangeLog, msSqlTlsOptions } from '../src/mssql/mssql-server-probe.ts';

describe('SQL Server probe', () => {
  it('reports CDC as the change log, leaving per-table capture to the build', () => {
    expect(msSqlChangeLog({ cdcEnabled: true }, [enableTableIssue('dbo', 'orders')])).toEqual({
      logBin: true,
      format: 'cdc',
      serverId: null,
      ready: true,
      issues: [],
    });
    expect(msSqlChangeLog({ cdcEnabled: false }, [ENABLE_CDC_ISSUE, START_AGENT_ISSUE])).toEqual({
      logBin: false,
      format: 'cdc',
      serverId: null,
      ready: false,
      issues: [ENABLE_CDC_ISSUE, START_AGENT_ISSUE],
    });
  });

  it('encrypts unless disabled and checks the certificate only for verify-full', () => {
    expect(msSqlTlsOptions('disable')).toEqual({ encrypt: false, trustServerCertificate: true });
    expect(msSqlTlsOptions(undefined)).toEqual({ encrypt: true, trustServerCertificate: true });
    expect(msSqlTlsOptions('require')).toEqual({ encrypt: true, trustServerCertificate: true });
    expect(msSqlTlsOptions('verify-full')).toEqual({
      encrypt: true,
      trustServerCertificate: false,
    });
  });
});
