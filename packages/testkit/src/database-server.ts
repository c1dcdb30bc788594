/** A throwaway database server started for tests or benchmarks. */
export interface DatabaseServer {
  readonly engine: 'mariadb' | 'postgres';
  /** Admin connection URL (no database for MariaDB, the `postgres` database for PostgreSQL). */
  readonly url: string;
  readonly port: number;
  /** The server's own folder (data, socket, log). */
  readonly dir: string;
  stop(): Promise<void>;
  /**
   * Stops the server (gracefully, or with `crash` by SIGKILL) and starts it again on the same
   * port and data, resolving when it accepts connections.
   */
  restart(options?: { crash?: boolean }): Promise<void>;
  /** Kills the server at once; for exit and signal handlers. */
  killNow(): void;
}
