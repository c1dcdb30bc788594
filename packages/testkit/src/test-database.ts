import { randomBytes } from 'node:crypto';
import mysql from 'mysql2/promise';
import pg from 'pg';

/** A uniquely named database on a throwaway server, with its DDL and data already applied. */
export interface TestDatabase {
  readonly name: string;
  /** Connection URL naming this database, as a user of Replix would give it. */
  readonly url: string;
  /** Runs one or more `;`-separated statements in this database. */
  exec(sql: string): Promise<void>;
  /** Runs one statement with parameters and returns its rows. */
  query<Row = Record<string, unknown>>(sql: string, params?: unknown[]): Promise<Row[]>;
  drop(): Promise<void>;
}

/** Statements run as the server's superuser, and fresh databases on it. */
export interface DatabaseAdmin {
  readonly serverUrl: string;
  exec(sql: string): Promise<void>;
  query<Row = Record<string, unknown>>(sql: string, params?: unknown[]): Promise<Row[]>;
  createDatabase(setupSql?: string): Promise<TestDatabase>;
}

function uniqueName(): string {
  return `t_${Date.now().toString(36)}_${randomBytes(4).toString('hex')}`;
}

function withDatabase(serverUrl: string, database: string): string {
  const url = new URL(serverUrl);
  url.pathname = `/${database}`;
  return url.toString();
}

async function mysqlRun<T>(url: string, work: (c: mysql.Connection) => Promise<T>): Promise<T> {
  const connection = await mysql.createConnection({ uri: url, multipleStatements: true });
  try {
    return await work(connection);
  } finally {
    await connection.end();
  }
}

async function pgRun<T>(url: string, work: (c: pg.Client) => Promise<T>): Promise<T> {
  const client = new pg.Client({ connectionString: url });
  await client.connect();
  try {
    return await work(client);
  } finally {
    await client.end();
  }
}

export function mariaDbAdmin(serverUrl: string): DatabaseAdmin {
  const exec = (url: string, sql: string) =>
    mysqlRun(url, async (c) => {
      await c.query(sql);
    });
  const query = <Row>(url: string, sql: string, params: unknown[] = []) =>
    mysqlRun(url, async (c) => (await c.query(sql, params))[0] as Row[]);
  return {
    serverUrl,
    exec: (sql) => exec(serverUrl, sql),
    query: (sql, params) => query(serverUrl, sql, params),
    async createDatabase(setupSql = '') {
      const name = uniqueName();
      await exec(serverUrl, `CREATE DATABASE \`${name}\``);
      const url = withDatabase(serverUrl, name);
      if (setupSql.trim()) await exec(url, setupSql);
      return {
        name,
        url,
        exec: (sql) => exec(url, sql),
        query: (sql, params) => query(url, sql, params),
        drop: () => exec(serverUrl, `DROP DATABASE IF EXISTS \`${name}\``),
      };
    },
  };
}

export function postgresAdmin(serverUrl: string): DatabaseAdmin {
  const exec = (url: string, sql: string) =>
    pgRun(url, async (c) => {
      await c.query(sql);
    });
  const query = <Row>(url: string, sql: string, params: unknown[] = []) =>
    pgRun(url, async (c) => (await c.query(sql, params)).rows as Row[]);
  return {
    serverUrl,
    exec: (sql) => exec(serverUrl, sql),
    query: (sql, params) => query(serverUrl, sql, params),
    async createDatabase(setupSql = '') {
      const name = uniqueName();
      await exec(serverUrl, `CREATE DATABASE "${name}"`);
      const url = withDatabase(serverUrl, name);
      if (setupSql.trim()) await exec(url, setupSql);
      return {
        name,
        url,
        exec: (sql) => exec(url, sql),
        query: (sql, params) => query(url, sql, params),
        drop: () => exec(serverUrl, `DROP DATABASE IF EXISTS "${name}" WITH (FORCE)`),
      };
    },
  };
}
