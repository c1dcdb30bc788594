import { describe, expect, it } from 'vitest';
import { connectorFromUrl } from '../src/connector-from-url.ts';
import { SourceConfigError } from '../src/errors.ts';
import { MySqlConnector } from '../src/mysql/mysql-connector.ts';
import { parseSourceUrl } from '../src/parse-source-url.ts';
import { PostgresConnector } from '../src/postgres/postgres-connector.ts';

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
      engine: 'mysql',
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
      engine: 'postgres',
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
    ]) {
      const error = thrown(() => parseSourceUrl(url));
      expect(error.code, url).toBe('invalid_source_url');
      expect(error.message).not.toContain(SECRET);
      expect(String(error.stack)).not.toContain(SECRET);
    }
  });
});

describe('connectorFromUrl', () => {
  it('makes the connector for the engine without connecting', async () => {
    const mysql = connectorFromUrl('mysql://u@127.0.0.1:1/db');
    expect(mysql).toBeInstanceOf(MySqlConnector);
    expect(mysql.engine).toBe('mysql');
    const postgres = connectorFromUrl('postgresql://u@127.0.0.1:1/db?schema=s');
    expect(postgres).toBeInstanceOf(PostgresConnector);
    expect(postgres.engine).toBe('postgres');
    expect((postgres as PostgresConnector).schema).toBe('s');
    await Promise.all([mysql.close(), postgres.close()]);
  });
});
