import type { ConnectionOptions } from 'mysql2';
import type { SourceTarget } from '../errors.ts';

/** Where and as whom a `MySqlConnector` connects; MariaDB is reached the same way. */
export interface MySqlConnectorOptions {
  readonly host: string;
  readonly port: number;
  readonly user: string;
  readonly password?: string | undefined;
  readonly database: string;
}

/**
 * mysql2 options that make it deliver values close to their canonical forms, so the converters
 * have little left to do: BIGINT and DECIMAL as exact strings, JSON as its text, DATE / DATETIME
 * / TIMESTAMP as text (no `Date`, no local-time shift), and the client time zone UTC.
 */
export function mySqlConnectionOptions(options: MySqlConnectorOptions): ConnectionOptions {
  return {
    host: options.host,
    port: options.port,
    user: options.user,
    password: options.password,
    database: options.database,
    supportBigNumbers: true,
    bigNumberStrings: true,
    decimalNumbers: false,
    jsonStrings: true,
    dateStrings: true,
    timezone: 'Z',
    charset: 'UTF8MB4_GENERAL_CI',
    connectTimeout: 10_000,
  };
}

export function mySqlTarget(options: MySqlConnectorOptions): SourceTarget {
  return {
    engine: 'mysql',
    host: options.host,
    port: options.port,
    database: options.database,
    user: options.user,
  };
}
