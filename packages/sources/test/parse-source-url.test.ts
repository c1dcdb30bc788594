import { describe, expect, it } from 'vitest';
import { connectorFromUrl } from '../src/connector-from-url.ts';
import { SourceConfigError } from '../src/errors.ts';
import { MySqlConnector } from '../src/mysql/mysql-connector.ts';
import { parseSourceUrl } from '../src/parse-source-url.ts';
import { PostgresConnector } from '../src/postgres/postgres-connector.ts';
import { sourceUrlThroughTunnel } from '../src/source-tls.ts';

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

describe('parseSourceUrl', () => {
  it('reads a MySQL URL, percent-decoding user, password and database', () => {
    expect(parseSourceUrl('mysql://app%40x:p%40ss%3Aw@db.example.com:3307/shop%2D1')).toEqual({
      backend: 'mysql',
      options: {
        host: 'db.example.com',
        port: 3307,
        user: 'app@x',
        password: 'p@ss:w',
        database: 'shop-1',
      },
    });
  });

  it('defaults ports, leaves a missing password undefined and strips IPv6 brackets', () => {
    expect(parseSourceUrl('mysql://root@[::1]/db').options).toEqual({
      host: '::1',
      port: 3306,
      user: 'root',
      password: undefined,
      database: 'db',
    });
    expect(parseSourceUrl('postgres://u@localhost/db').options.port).toBe(5432);
  });

  it('reads postgres:// and postgresql:// URLs with an optional schema', () => {
    expect(parseSourceUrl('postgres://u:pw@h:6543/app')).toEqual({
      backend: 'postgres',
      options: {
        host: 'h',
        port: 6543,
        user: 'u',
        password: 'pw',
        database: 'app',
        schema: 'public',
      },
    });
    expect(parseSourceUrl('postgresql://u@h/app?schema=Sales').options).toMatchObject({
      database: 'app',
      schema: 'Sales',
    });
  });

  it('reads the TLS settings of MySQL and PostgreSQL URLs (libpq names)', () => {
    expect(parseSourceUrl('mysql://u@h/db?sslmode=require').options).toMatchObject({
      tls: { mode: 'require' },
    });
    expect(
      parseSourceUrl('postgres://u@h/db?sslmode=verify-full&sslrootcert=%2Fetc%2Fca.pem').options,
    ).toMatchObject({ tls: { mode: 'verify-full', rootCertFile: '/etc/ca.pem' } });
    // No sslmode: the connector uses prefer.
    expect(parseSourceUrl('postgres://u@h/db').options).not.toHaveProperty('tls');
    expect(parseSourceUrl('mysql://u@h/db?sslservername=db.internal').options).toMatchObject({
      tls: { mode: 'prefer', serverName: 'db.internal' },
    });
  });

  it('rejects unknown schemes with unsupported_source, never quoting the password', () => {
    for (const url of [`http://u:${SECRET}@h/db`, `mongodb://u:${SECRET}@h/db`]) {
      const error = thrown(() => parseSourceUrl(url));
      expect(error.code).toBe('unsupported_source');
      expect(error.message).not.toContain(SECRET);
    }
  });

  it('rejects unusable URLs with invalid_source_url, never quoting the password', () => {
    for (const url of [
      `not a url ${SECRET}`,
      `mysql://u:${SECRET}@h`,
      `mysql://u:${SECRET}@h/`,
      `mysql://u:${SECRET}@h/a/b`,
      `mysql://:${SECRET}@h/db`,
      `mysql://u:${SECRET}%ZZ@h/db`,
      `postgres://u:${SECRET}@h/db?schema=`,
      `postgres://u:${SECRET}@h/db?sslmode=verify-ca`,
      `mysql://u:${SECRET}@h/db?sslmode=REQUIRED`,
      `mysql://u:${SECRET}@h/db?sslmode=require&sslrootcert=`,
    ]) {
      const error = thrown(() => parseSourceUrl(url));
      expect(error.code, url).toBe('invalid_source_url');
      expect(error.message).not.toContain(SECRET);
      expect(String(error.stack)).not.toContain(SECRET);
    }
  });
});

describe('sourceUrlThroughTunnel', () => {
  it("points the URL at the tunnel and keeps the real host as the certificate's name", () => {
    const through = sourceUrlThroughTunnel(
      'postgres://u:pw@db.internal:5432/app?sslmode=verify-full',
      {
        host: '127.0.0.1',
        port: 40001,
      },
    );
    expect(parseSourceUrl(through).options).toMatchObject({
      host: '127.0.0.1',
      port: 40001,
      password: 'pw',
      tls: { mode: 'verify-full', serverName: 'db.internal' },
    });
    const ipv6 = sourceUrlThroughTunnel('mysql://u@[fd00::5]:3306/db', { host: '::1', port: 2 });
    expect(parseSourceUrl(ipv6).options).toMatchObject({
      host: '::1',
      tls: { mode: 'prefer', serverName: 'fd00::5' },
    });
  });
});

describe('connectorFromUrl', () => {
  it('makes the connector for the backend without connecting', async () => {
    const mysql = connectorFromUrl('mysql://u@127.0.0.1:1/db');
    expect(mysql).toBeInstanceOf(MySqlConnector);
    expect(mysql.backend).toBe('mysql');
    const postgres = connectorFromUrl('postgresql://u@127.0.0.1:1/db?schema=s');
    expect(postgres).toBeInstanceOf(PostgresConnector);
    expect(postgres.backend).toBe('postgres');
    expect((postgres as PostgresConnector).schema).toBe('s');
    await Promise.all([mysql.close(), postgres.close()]);
  });
});
