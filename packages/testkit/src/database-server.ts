/** A throwaway database server started for tests or benchmarks. */
export interface DatabaseServer {
  readonly engine: 'mariadb' | 'postgres';
  /** Admin connection URL (no database for MariaDB, the `postgres` database for PostgreSQL). */
  readonly url: string;
  readonly port: number;
  /** The server's own folder (data, socket, log). */
  readonly dir: string;
  /** Set when the server was started with `tls` (see `ServerOptions`). */
  readonly tls?: ServerTls | undefined;
  stop(): Promise<void>;
  /**
   * Stops the server (gracefully, or with `crash` by SIGKILL) and starts it again on the same
   * port and data, resolving when it accepts connections.
   */
  restart(options?: { crash?: boolean }): Promise<void>;
  /** Kills the server at once; for exit and signal handlers. */
  killNow(): void;
}

/** How a test server is started. */
export interface ServerOptions {
  /**
   * TLS on, with a throwaway CA and server certificate (for `localhost` and `127.0.0.1`) made
   * with `openssl` in the server's folder, and a user who may only connect over TLS (see
   * `ServerTls`). Plain connections stay open to everybody else.
   */
  readonly tls?: boolean | undefined;
  /**
   * MariaDB only: `false` starts the server without a binary log, as many are set up, so
   * change data capture cannot run on it (a source that must be polled).
   */
  readonly binlog?: boolean | undefined;
}

/** A TLS test server's CA file and its TLS-only user (all privileges, replication included). */
export interface ServerTls {
  readonly caFile: string;
  readonly user: string;
  readonly password: string;
}

/** The TLS-only user of TLS test servers (PostgreSQL: a `hostssl` rule; MariaDB: REQUIRE SSL). */
export const TLS_ONLY_USER = 'tls_only';
export const TLS_ONLY_PASSWORD = 'tls-only-secret';
