import type { ClientConfig } from 'pg';
import type { SourceTarget } from '../errors.ts';
import { nodeTlsOptions, type SourceTls, TlsNegotiation } from '../source-tls.ts';

/** Where and as whom a `PostgresConnector` connects, and which schema it reads. */
export interface PostgresConnectorOptions {
  readonly host: string;
  readonly port: number;
  readonly user: string;
  readonly password?: string | undefined;
  readonly database: string;
  /** The schema whose base tables are the source (default `public`). */
  readonly schema?: string | undefined;
  /** Names the replication slot and publication `replix_<replicationId>` (see `ConnectorOptions`). */
  readonly replicationId?: string | undefined;
  /** TLS settings (URL `sslmode` …); without them `prefer`. */
  readonly tls?: SourceTls | undefined;
}

/** node-postgres's error when the server answers its SSL request with "no" (it has no code). */
export function postgresRefusesTls(error: unknown): boolean {
  return error instanceof Error && error.message === 'The server does not support SSL connections';
}

/** The TLS negotiation of one connector (or probe): its connections share what `prefer` learns. */
export function postgresTlsNegotiation(options: PostgresConnectorOptions): TlsNegotiation {
  return new TlsNegotiation(options.tls, postgresRefusesTls);
}

/**
 * node-postgres's client settings; `useTls` is what the connector's `TlsNegotiation` decided
 * for this connection. `ssl` is always set, so PGSSLMODE and friends never decide instead.
 */
export function postgresConnectionConfig(
  options: PostgresConnectorOptions,
  useTls: boolean,
): ClientConfig {
  return {
    host: options.host,
    port: options.port,
    user: options.user,
    password: options.password,
    database: options.database,
    application_name: 'replix',
    // node-postgres waits forever by default for a server that never answers.
    connectionTimeoutMillis: 10_000,
    ssl: useTls ? { ...nodeTlsOptions(options.tls ?? { mode: 'prefer' }) } : false,
  };
}

export function postgresTarget(options: PostgresConnectorOptions): SourceTarget {
  return {
    backend: 'postgres',
    host: options.host,
    port: options.port,
    database: options.database,
    user: options.user,
  };
}
