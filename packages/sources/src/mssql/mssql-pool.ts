import type { ConnectionPool, Transaction } from 'mssql';
import type { MsSqlDriverConnection } from './mssql-connection-options.ts';

const CLOSE_TIMEOUT_MS = 10_000;

/** Whether `promise` settles (either way) within `ms`; the timer never keeps the process alive. */
export function settlesWithin(promise: Promise<unknown>, ms: number): Promise<boolean> {
  return new Promise((resolve) => {
    const timer = setTimeout(() => resolve(false), ms);
    timer.unref();
    const settled = () => {
      clearTimeout(timer);
      resolve(true);
    };
    promise.then(settled, settled);
  });
}

/** What a pool's owner still holds when it gives the pool up without ending its work politely. */
export interface MsSqlAbandonedWork {
  /** The pool's one connection, to be closed outright. */
  readonly connection: MsSqlDriverConnection | undefined;
  /** A transaction still holding that connection. */
  readonly transaction?: Transaction | undefined;
  /** Settles when the request still running on the connection has finished. */
  readonly running?: Promise<void> | undefined;
}

/**
 * Closes a pool and never hangs: mssql's `close` waits until every borrowed connection is
 * returned, and a transaction keeps its connection borrowed until it ends. With `abandon`, the
 * connection is closed first (a request still running fails at once, its result unread), and
 * the transaction is rolled back, which fails on the closed connection but hands it back.
 */
export async function endMsSqlPool(
  pool: ConnectionPool,
  abandon?: MsSqlAbandonedWork,
): Promise<void> {
  if (abandon) {
    abandon.connection?.close();
    if (abandon.running) await settlesWithin(abandon.running, CLOSE_TIMEOUT_MS);
    if (abandon.transaction) await settlesWithin(abandon.transaction.rollback(), CLOSE_TIMEOUT_MS);
  }
  await settlesWithin(pool.close(), CLOSE_TIMEOUT_MS);
}
