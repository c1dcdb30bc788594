import { setTimeout as sleep } from 'node:timers/promises';
import type { ChangeBatch, ChangeStreamRequest } from '../replication.ts';
import { MsSqlChangePoller } from './mssql-change-poller.ts';
import {
  type MsSqlConnectorOptions,
  type MsSqlDriverConnection,
  msSqlConfig,
  msSqlTarget,
} from './mssql-connection-options.ts';
import { loadMssql } from './mssql-driver.ts';
import { msSqlErrorFrom } from './mssql-errors.ts';
import { endMsSqlPool } from './mssql-pool.ts';
import { MsSqlLsn } from './mssql-position.ts';

/**
 * How long to wait between polls while nothing new is waiting. The capture job itself scans the
 * log every 5 s by default (`sys.sp_cdc_change_job @pollinginterval`), so polling faster mostly
 * shortens the wait after it has run.
 */
export const MSSQL_POLL_INTERVAL_MS = 500;

/**
 * Streams committed changes of the requested tables from `request.from` (see
 * `MsSqlChangePoller` for what each poll reads), on a dedicated connection, until
 * `request.signal` aborts: then the iterator returns and the connection closes, a query in
 * flight included. Connection failures end the stream with a `SourceConnectionError`; the
 * caller reconnects from the last position it applied.
 */
export async function* streamMsSqlChanges(
  options: MsSqlConnectorOptions,
  request: ChangeStreamRequest,
): AsyncGenerator<ChangeBatch, void, undefined> {
  const { signal } = request;
  const from = MsSqlLsn.from(request.from);
  if (signal.aborted) return;
  const target = msSqlTarget(options);
  let connection: MsSqlDriverConnection | undefined;
  const pool = new (await loadMssql()).ConnectionPool(
    msSqlConfig(options, {
      maxConnections: 1,
      // A poll over a long backlog may take a while; an abort ends it, not a timer.
      requestTimeout: 0,
      onConnection: (opened) => {
        connection = opened;
      },
    }),
  );
  // An error on the idle connection is emitted on the pool; the next poll reports it.
  pool.on('error', () => {});
  const onAbort = () => connection?.close();
  signal.addEventListener('abort', onAbort, { once: true });
  try {
    await pool.connect();
    const poller = new MsSqlChangePoller(pool, options.schema ?? 'dbo', request.tables, from);
    while (!signal.aborted) {
      const { batch, more } = await poller.poll();
      if (batch !== null) yield batch;
      if (!more) await sleep(MSSQL_POLL_INTERVAL_MS, undefined, { signal });
    }
  } catch (error) {
    // Whatever an abort interrupted (the sleep, a query on the closed connection) is no failure.
    if (signal.aborted) return;
    throw msSqlErrorFrom(error, target, 'reading change data');
  } finally {
    signal.removeEventListener('abort', onAbort);
    await endMsSqlPool(pool);
  }
}
