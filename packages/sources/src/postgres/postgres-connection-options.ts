import type { ClientConfig } from 'pg';
import type { SourceTarget } from '../errors.ts';

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
}

export function postgresConnectionConfig(options: PostgresConnectorOptions): ClientConfig {
  return {
    host: options.host,
    port: options.port,
    user: options.user,
    password: options.password,
    database: options.database,
    application_name: 'replix',
    // node-postgres waits forever by default for a server that never answers.
    connectionTimeoutMillis: 10_000,
  };
}

export function postgresTarget(options: PostgresConnectorOptions): SourceTarget {
  return {
    engine: 'postgres',
    host: options.host,
    port: options.port,
    database: options.database,
    user: options.user,
  };
}
