import type { config as MsSqlConfig } from 'mssql';
import type { SourceTarget } from '../errors.ts';

/** Where and as whom an `MsSqlConnector` connects, and which schema it reads. */
export interface MsSqlConnectorOptions {
  readonly host: string;
  readonly port: number;
  readonly user: string;
  readonly password?: string | undefined;
  readonly database: string;
  /** The schema whose base tables are the source (default `dbo`). */
  readonly schema?: string | undefined;
  /** Encrypt the connection with TLS (default true, as the driver's own default). */
  readonly encrypt?: boolean | undefined;
  /** Accept a server certificate no CA vouches for, e.g. a dev container's (default false). */
  readonly trustServerCertificate?: boolean | undefined;
}

/** The tedious connection a pool opens; the snapshot and the change stream keep hold of it. */
export type MsSqlDriverConnection = Parameters<NonNullable<MsSqlConfig['beforeConnect']>>[0];

/** Knobs that differ between the metadata pool, snapshots and change streams. */
export interface MsSqlPoolShape {
  readonly maxConnections: number;
  /** Milliseconds a query may run; 0 for none (a paused snapshot read is still running). */
  readonly requestTimeout: number;
  /** Called with each connection the pool opens, so its owner can close it outright. */
  readonly onConnection?: ((connection: MsSqlDriverConnection) => void) | undefined;
}

/**
 * mssql options that make tedious deliver values close to their canonical forms: temporal
 * values are decoded as UTC (`useUTC`), so DATETIME / DATETIME2 read as UTC wall clocks and a
 * DATETIMEOFFSET as its UTC instant. DECIMAL and MONEY would arrive as lossy doubles and are
 * cast to text in SQL instead (see `mssql-sql.ts`); BIGINT already arrives as a string.
 */
export function msSqlConfig(options: MsSqlConnectorOptions, shape: MsSqlPoolShape): MsSqlConfig {
  return {
    server: options.host,
    port: options.port,
    user: options.user,
    password: options.password,
    database: options.database,
    connectionTimeout: 10_000,
    requestTimeout: shape.requestTimeout,
    options: {
      encrypt: options.encrypt ?? true,
      trustServerCertificate: options.trustServerCertificate ?? false,
      useUTC: true,
      appName: 'replix',
    },
    pool: { min: 0, max: shape.maxConnections },
    // The default validation runs `SELECT 1` before every borrowed connection is used.
    validateConnection: 'socket',
    beforeConnect: shape.onConnection,
  };
}

export function msSqlTarget(options: MsSqlConnectorOptions): SourceTarget {
  return {
    backend: 'mssql',
    host: options.host,
    port: options.port,
    database: options.database,
    user: options.user,
  };
}
