import { describe, expect, it } from 'vitest';
import { connectorFromUrl } from '../src/connector-from-url.ts';
import { SourceConfigError } from '../src/errors.ts';
import { MsSqlConnector } from '../src/mssql/mssql-connector.ts';
import { parseSourceUrl } from '../src/parse-source-url.ts';

const SECRET = 's3cr3t!pw';

function thrown(work: () => unknown): SourceConfigError {
  try {
    work();
  } catch (error) {
    if (error instanceof SourceConfigError) return error;
    throw error;
  }
  throw new Error('expected a SourceConfigError');
}

describe('parseSourceUrl for SQL Server', () => {
  it('reads an mssql:// URL with defaults: port 1433, schema dbo, encrypted, CA-checked', () => {
    expect(parseSourceUrl('mssql://app:p%40ss@db.example.com/shop')).toEqual({
      backend: 'mssql',
      options: {
        host: 'db.example.com',
        port: 1433,
        user: 'app',
        password: 'p@ss',
        database: 'shop',
        schema: 'dbo',
        encrypt: true,
        trustServerCertificate: false,
      },
    });
  });

  it('reads sqlserver:// the same way, with schema, port and TLS options', () => {
    expect(
      parseSourceUrl(
        'sqlserver://sa:pw@[::1]:14330/Sales%20DB?schema=Ops&encrypt=FALSE&trustServerCertificate=true',
      ),
    ).toEqual({
      backend: 'mssql',
      options: {
        host: '::1',
        port: 14330,
        user: 'sa',
        password: 'pw',
        database: 'Sales DB',
        schema: 'Ops',
        encrypt: false,
        trustServerCertificate: true,
      },
    });
  });

  it('rejects unusable SQL Server URLs, never quoting the password', () => {
    for (const url of [
      `mssql://u:${SECRET}@h`,
      `mssql://u:${SECRET}@h/a/b`,
      `mssql://:${SECRET}@h/db`,
      `sqlserver://u:${SECRET}@h/db?schema=`,
      `mssql://u:${SECRET}@h/db?encrypt=yes`,
      `mssql://u:${SECRET}@h/db?trustServerCertificate=1`,
    ]) {
      const error = thrown(() => parseSourceUrl(url));
      expect(error.code, url).toBe('invalid_source_url');
      expect(error.message).not.toContain(SECRET);
      expect(String(error.stack)).not.toContain(SECRET);
    }
  });

  it('names mssql:// among the supported schemes', () => {
    const error = thrown(() => parseSourceUrl(`oracle://u:${SECRET}@h/db`));
    expect(error.code).toBe('unsupported_source');
    expect(error.message).toContain('mssql://');
    expect(error.message).not.toContain(SECRET);
  });
});

describe('connectorFromUrl for SQL Server', () => {
  it('makes an MsSqlConnector without connecting', async () => {
    for (const url of ['mssql://u@127.0.0.1:1/db?schema=s', 'sqlserver://u@127.0.0.1:1/db']) {
      const connector = connectorFromUrl(url);
      expect(connector).toBeInstanceOf(MsSqlConnector);
      expect(connector.backend).toBe('mssql');
      await connector.close();
    }
    const connector = connectorFromUrl('mssql://u@127.0.0.1:1/db?schema=s');
    expect(connector instanceof MsSqlConnector && connector.schema).toBe('s');
    await connector.close();
  });
});
