import process from 'node:process';
import type { SourceBackend } from './connector.ts';
import type { SourceTls } from './source-tls.ts';

/** A server to probe with raw credentials, before any connection is saved. */
export interface ServerProbeTarget {
  readonly host: string;
  readonly port: number;
  readonly user: string;
  readonly password: string;
  /**
   * The database to log in to: optional for MySQL; PostgreSQL's initial database (default
   * `postgres`); SQL Server's (default `master`), whose CDC settings are then reported.
   */
  readonly database?: string | undefined;
  /**
   * As a source URL's `sslmode` … sets it (default `prefer`); `serverName` when `host` is an SSH
   * tunnel's local end. SQL Server maps the mode onto encrypt / trustServerCertificate.
   */
  readonly tls?: SourceTls | undefined;
}

/**
 * The connector options of a probe target, so that a probe connects exactly as the backend's
 * connector does (TLS included). `database` defaults to `defaultDatabase`.
 */
export function probeConnectorOptions(
  target: ServerProbeTarget,
  defaultDatabase: string,
): {
  host: string;
  port: number;
  user: string;
  password: string;
  database: string;
  tls: SourceTls | undefined;
} {
  return {
    host: target.host,
    port: target.port,
    user: target.user,
    password: target.password,
    database: target.database ?? defaultDatabase,
    tls: target.tls,
  };
}

/**
 * The change-log readiness of a server in one shape for every backend (the connection
 * test's `binlog`). MySQL/MariaDB: the binary log. PostgreSQL: logical replication (`logBin` is
 * `wal_level = logical`, `format` the `wal_level`, `serverId` null). SQL Server: change data
 * capture (`logBin` is CDC enabled on the database, `format` `cdc`, `serverId` null).
 */
export interface ChangeLogReadiness {
  readonly logBin: boolean;
  readonly format: string | null;
  readonly serverId: number | null;
  readonly ready: boolean;
  readonly issues: readonly string[];
}

/** What a probe learnt about a server. */
export interface ServerProbeReport {
  /** The round trip of a trivial query on the open connection, in milliseconds. */
  readonly latencyMs: number;
  /** Data plus index bytes of the visible databases; undefined when the query failed. */
  readonly estimatedSizeBytes: number | undefined;
  /** Databases the user can use, system ones excluded, sorted. */
  readonly availableSchemas: readonly string[];
  readonly changeLog: ChangeLogReadiness;
}

/**
 * Checks a server with raw credentials: connects, measures latency, lists databases, estimates
 * size and checks change-log readiness. One implementation per backend folder
 * (`mysql-server-probe.ts`, …). Fails with a `SourceError` whose message is safe to show (no
 * host, password or driver stack).
 */
export interface ServerProbe {
  readonly backend: SourceBackend;
  probe(target: ServerProbeTarget): Promise<ServerProbeReport>;
}

/** Milliseconds `work` takes, rounded to 0.01 ms. */
export async function timed(work: () => Promise<unknown>): Promise<number> {
  const started = process.hrtime.bigint();
  await work();
  return Math.round(Number(process.hrtime.bigint() - started) / 10_000) / 100;
}

/** The value of `work`, or undefined when it fails (optional facts such as the size). */
export async function optional<T>(work: () => Promise<T>): Promise<T | undefined> {
  try {
    return await work();
  } catch {
    return undefined;
  }
}
