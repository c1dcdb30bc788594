import { isIP, connect as netConnect } from 'node:net';
import type { ConnectionOptions } from 'mysql2';
import type { SourceTarget } from '../errors.ts';
import { nodeTlsOptions, type SourceTls, TlsNegotiation } from '../source-tls.ts';

/** Where and as whom a `MySqlConnector` connects; MariaDB is reached the same way. */
export interface MySqlConnectorOptions {
  readonly host: string;
  readonly port: number;
  readonly user: string;
  readonly password?: string | undefined;
  readonly database: string;
  /** TLS settings (URL `sslmode` …); without them `prefer`. */
  readonly tls?: SourceTls | undefined;
}

/** mysql2's error when TLS was asked for and the server's handshake offers none. */
export function mySqlRefusesTls(error: unknown): boolean {
  return (error as { code?: unknown } | null)?.code === 'HANDSHAKE_NO_SSL_SUPPORT';
}

/** The TLS negotiation of one connector (or probe): its connections share what `prefer` learns. */
export function mySqlTlsNegotiation(options: MySqlConnectorOptions): TlsNegotiation {
  return new TlsNegotiation(options.tls, mySqlRefusesTls);
}

/**
 * mysql2's `ssl` (and, for a certificate name other than the host, a `stream`). mysql2 checks
 * the certificate's name against `host` and takes no `checkServerIdentity` of its own, so when
 * `serverName` differs from the host (an SSH tunnel's local end) the connection names the
 * server `serverName` and opens its socket to the real address itself. A serverName that is an
 * IP address cannot be checked this way (TLS sends no IP address as server name).
 */
function tlsConnectionOptions(
  options: MySqlConnectorOptions,
  useTls: boolean,
): Pick<ConnectionOptions, 'ssl' | 'host' | 'stream'> {
  if (!useTls || !options.tls) return useTls ? { ssl: { rejectUnauthorized: false } } : {};
  const tls = nodeTlsOptions(options.tls);
  const ssl = {
    rejectUnauthorized: tls.rejectUnauthorized,
    ...(tls.ca === undefined ? {} : { ca: tls.ca }),
    ...(options.tls.mode === 'verify-full' ? { verifyIdentity: true } : {}),
  };
  const serverName = options.tls.serverName;
  if (
    options.tls.mode !== 'verify-full' ||
    serverName === undefined ||
    serverName === options.host ||
    isIP(serverName) !== 0
  ) {
    return { ssl };
  }
  return {
    ssl,
    host: serverName,
    stream: () => netConnect({ host: options.host, port: options.port }),
  };
}

/**
 * mysql2 options that make it deliver values close to their canonical forms, so the converters
 * have little left to do: BIGINT and DECIMAL as exact strings, JSON as its text, DATE / DATETIME
 * / TIMESTAMP as text (no `Date`, no local-time shift), and the client time zone UTC. `useTls`
 * is what the connector's `TlsNegotiation` decided for this connection.
 */
export function mySqlConnectionOptions(
  options: MySqlConnectorOptions,
  useTls: boolean,
): ConnectionOptions {
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
    ...tlsConnectionOptions(options, useTls),
  };
}

export function mySqlTarget(options: MySqlConnectorOptions): SourceTarget {
  return {
    backend: 'mysql',
    host: options.host,
    port: options.port,
    database: options.database,
    user: options.user,
  };
}
