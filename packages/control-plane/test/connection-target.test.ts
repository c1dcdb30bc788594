import { randomBytes } from 'node:crypto';
import { parseSourceUrl } from '@replix/sources';
import type { Selectable } from 'kysely';
import { describe, expect, it } from 'vitest';
import type { ConnectionTable } from '../src/adapters/store/schema.ts';
import { SecretBox } from '../src/adapters/store/secret-box.ts';
import {
  connectionTarget,
  withSourceConnector,
} from '../src/application/source-access/connection-target.ts';
import { ApiError } from '../src/domain/errors.ts';
import { splitSourceSchema } from '../src/domain/source-schema-name.ts';

const secrets = new SecretBox(randomBytes(32));

function row(overrides: Partial<Selectable<ConnectionTable>> = {}): Selectable<ConnectionTable> {
  return {
    id: 'c',
    account_id: 'a',
    name: 'n',
    backend: 'mysql',
    host: 'db.internal',
    port: 3307,
    username: 'app@corp',
    password_enc: secrets.seal('p@ss:/w?rd#'),
    default_region: 'eu-west-1',
    tls_mode: 'prefer',
    ssh: null,
    ssh_private_key_enc: null,
    last_test: null,
    last_tested_at: null,
    created_at: new Date(),
    updated_at: new Date(),
    deleted_at: null,
    ...overrides,
  };
}

describe('connectionTarget', () => {
  it('builds a URL connectorFromUrl reads back exactly, credentials encoded', () => {
    const { sourceUrl, ssh } = connectionTarget(row(), secrets, 'shop db');
    expect(ssh).toBeUndefined();
    expect(parseSourceUrl(sourceUrl)).toEqual({
      backend: 'mysql',
      options: {
        host: 'db.internal',
        port: 3307,
        user: 'app@corp',
        password: 'p@ss:/w?rd#',
        database: 'shop db',
        tls: { mode: 'prefer' },
      },
    });
  });

  it('writes a user without a password as user@host, as replix serve --source takes it', () => {
    for (const backend of ['mysql', 'postgres']) {
      const { sourceUrl } = connectionTarget(row({ backend, password_enc: null }), secrets, 'app');
      expect(sourceUrl, backend).toMatch(/^[a-z]+:\/\/app%40corp@db\.internal:3307\/app/);
      expect(parseSourceUrl(sourceUrl).options, backend).toMatchObject({
        user: 'app@corp',
        password: undefined,
      });
    }
  });

  it("carries the connection's TLS mode as sslmode for MySQL and PostgreSQL", () => {
    for (const backend of ['mysql', 'postgres']) {
      for (const mode of ['disable', 'prefer', 'require', 'verify-full']) {
        const url = connectionTarget(row({ backend, tls_mode: mode }), secrets, 'app').sourceUrl;
        expect(parseSourceUrl(url).options, `${backend} ${mode}`).toMatchObject({ tls: { mode } });
      }
    }
  });

  it('names database and schema for PostgreSQL, and the server database without a schema', () => {
    const pg = row({ backend: 'postgres', port: 5432 });
    expect(
      parseSourceUrl(connectionTarget(pg, secrets, 'app/sales').sourceUrl).options,
    ).toMatchObject({
      database: 'app',
      schema: 'sales',
    });
    expect(parseSourceUrl(connectionTarget(pg, secrets, 'app').sourceUrl).options).toMatchObject({
      database: 'app',
      schema: 'public',
    });
    expect(
      parseSourceUrl(connectionTarget(pg, secrets, undefined).sourceUrl).options,
    ).toMatchObject({
      database: 'postgres',
    });
  });

  it('maps the TLS mode onto SQL Server encryption settings', () => {
    const modes = {
      disable: [false, true],
      prefer: [true, true],
      require: [true, true],
      'verify-full': [true, false],
    };
    for (const [mode, [encrypt, trust]] of Object.entries(modes)) {
      const url = connectionTarget(
        row({ backend: 'mssql', tls_mode: mode }),
        secrets,
        'app',
      ).sourceUrl;
      expect(parseSourceUrl(url).options, mode).toMatchObject({
        encrypt,
        trustServerCertificate: trust,
      });
    }
  });

  it('brackets IPv6 hosts and opens the SSH key', () => {
    const target = connectionTarget(
      row({
        host: '::1',
        ssh: { host: 'bastion', port: 22, user: 'tunnel' },
        ssh_private_key_enc: secrets.seal('KEY'),
      }),
      secrets,
      'db',
    );
    expect(parseSourceUrl(target.sourceUrl).options).toMatchObject({ host: '::1' });
    expect(target.ssh).toEqual({ host: 'bastion', port: 22, user: 'tunnel', privateKey: 'KEY' });
  });

  it('reports a source failure as source_unavailable without the host', async () => {
    const target = connectionTarget(row({ host: '127.0.0.1', port: 1 }), secrets, 'db');
    const error = await withSourceConnector(target, (c) => c.introspect()).catch((e: unknown) => e);
    expect(error).toBeInstanceOf(ApiError);
    expect(error).toMatchObject({
      code: 'source_unavailable',
      message: 'Could not connect to the source database (ECONNREFUSED).',
    });
  });
});

describe('splitSourceSchema', () => {
  it('keeps MySQL names whole and splits database/schema elsewhere', () => {
    expect(splitSourceSchema('mysql', 'a/b')).toEqual({ database: 'a/b', schema: undefined });
    expect(splitSourceSchema('mssql', 'app/dbo')).toEqual({ database: 'app', schema: 'dbo' });
    expect(splitSourceSchema('mssql', undefined)).toEqual({
      database: 'master',
      schema: undefined,
    });
  });
});
