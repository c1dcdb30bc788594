import { randomInt } from 'node:crypto';
import type { AnyBinlogEvent, BinlogEventByName, BinlogEventName } from '@vlasky/zongji';
import type { Pool } from 'mysql2/promise';
import { ReplicationError, SourceConnectionError, type SourceError } from '../errors.ts';
import type { ChangeBatch, ChangeStreamRequest } from '../replication.ts';
import type { TlsNegotiation } from '../source-tls.ts';
import { BinlogAssembler, type CommittedChanges } from './mysql-binlog-assembler.ts';
import { type MySqlBinlogClient, newBinlogClient } from './mysql-binlog-client.ts';
import { binlogStreamError } from './mysql-binlog-errors.ts';
import { readBinlogLayouts } from './mysql-binlog-layout.ts';
import {
  type MySqlConnectorOptions,
  mySqlConnectionOptions,
  mySqlTarget,
} from './mysql-connection-options.ts';
import { BinlogPosition } from './mysql-position.ts';
import { readMySqlReplicationFacts } from './mysql-replication-facts.ts';
import { mySqlReplicationReadiness } from './mysql-replication-readiness.ts';

/** What a binlog stream needs from its connector. */
export interface BinlogStreamContext {
  readonly options: MySqlConnectorOptions;
  /** The connector's TLS negotiation: the binlog connection uses TLS as its pool does. */
  readonly tls: TlsNegotiation;
  /** The connector's metadata pool, for the checks and the table layouts at the start. */
  pool(): Promise<Pool>;
  /** Registers a running stream so that closing the connector ends it; returns its removal. */
  attach(end: () => void): () => void;
}

/** Changes per batch, at most, unless one transaction alone holds more (never split). */
const MAX_BATCH_CHANGES = 10_000;
/** Committed changes waiting for the consumer past which the binlog connection is paused. */
const QUEUE_HIGH = 20_000;
const QUEUE_LOW = 5_000;
/** How often, at most, an empty batch reports progress over transactions of other tables. */
const PROGRESS_INTERVAL_MS = 10_000;
/** The server sends a heartbeat when it has sent nothing for this long. */
const HEARTBEAT_SECONDS = 10;
/**
 * Silence after which the connection counts as lost: a peer that vanished sends no TCP reset,
 * and the dump would wait for ever. Armed once a heartbeat has been seen.
 */
const SILENCE_LIMIT_MS = 45_000;
/** zongji's stop kills the dump thread through its control connection, waiting up to 1 s. */
const STOP_TIMEOUT_MS = 5_000;
/** The longest wait_timeout servers accept: the control connection idles all stream long. */
const IDLE_CONTROL_SECONDS = 31_536_000;

const EVENTS: BinlogEventName[] = [
  'rotate',
  'tablemap',
  'writerows',
  'updaterows',
  'deleterows',
  'xid',
  'xaprepare',
  'query',
  'heartbeat',
];

function is<N extends BinlogEventName>(
  event: AnyBinlogEvent,
  name: N,
): event is BinlogEventByName<N> {
  return event.getEventName() === name;
}

function binlogPositionOf(position: ChangeStreamRequest['from']): BinlogPosition {
  if (position instanceof BinlogPosition) return position;
  throw new ReplicationError(
    'replication_failed',
    `A MySQL change stream cannot start from a ${position.backend} position.`,
  );
}

/** Refuses to start where row events would be missing or incomplete. */
async function checkBinlogSettings(pool: Pool): Promise<void> {
  const facts = await readMySqlReplicationFacts(pool);
  // Privileges are left to the server: a role's grants are invisible to SHOW GRANTS.
  const readiness = mySqlReplicationReadiness({
    ...facts,
    replicationPrivileges: true,
    reloadPrivilege: null,
  });
  if (!readiness.ready) {
    throw new ReplicationError(
      'replication_not_ready',
      'The source is not set up for change data capture.',
      { issues: readiness.issues },
    );
  }
}

/**
 * Stops zongji once, however often asked: its stop kills the dump thread through the control
 * connection and only then closes that, which a second stop would cut short.
 */
function stopper(client: MySqlBinlogClient): () => Promise<void> {
  let stopping: Promise<void> | undefined;
  return () => {
    stopping ??= new Promise((resolve) => {
      const timer = setTimeout(resolve, STOP_TIMEOUT_MS);
      client.once('stopped', () => {
        clearTimeout(timer);
        resolve();
      });
      client.stop();
    });
    return stopping;
  };
}

/**
 * The BinlogStream: streams committed changes of the followed tables from `request.from` by
 * reading the binary log as a replica does (zongji over mysql2: a control connection and a
 * binlog dump connection).
 *
 * Batches hold whole transactions in commit order, each batch's position the end of its last
 * commit event: a dump started there begins with the next transaction. An empty batch reports
 * progress over transactions of other tables now and then, so that a quiet table's position
 * does not fall behind the binlogs the server keeps.
 */
export async function* mySqlBinlogStream(
  context: BinlogStreamContext,
  request: ChangeStreamRequest,
): AsyncGenerator<ChangeBatch, void, undefined> {
  const { signal } = request;
  if (signal.aborted) return;
  const from = binlogPositionOf(request.from);
  const { options } = context;
  const target = mySqlTarget(options);
  const tables = request.tables.map((table) => table.table);
  let assembler: BinlogAssembler;
  let useTls: boolean;
  try {
    const pool = await context.pool();
    await checkBinlogSettings(pool);
    const layouts = await readBinlogLayouts(pool, tables);
    assembler = new BinlogAssembler(options.database, request.tables, layouts, from);
    // The pool has connected, so even `prefer` knows by now whether the server offers TLS.
    useTls = context.tls.useTls !== false;
  } catch (error) {
    throw binlogStreamError(error, from, target);
  }
  if (signal.aborted) return;

  let ended = false;
  let failure: SourceError | null = null;
  let paused = false;
  let lastEventAt = Date.now();
  /** The watchdog trusts silence only once heartbeats are known to come. */
  let heartbeats = false;
  let wake: (() => void) | null = null;
  const notify = () => {
    const resume = wake;
    wake = null;
    resume?.();
  };
  const client = await newBinlogClient(mySqlConnectionOptions(options, useTls), (event) =>
    assembler.columnSchemasFor(event),
  );
  const stop = stopper(client);
  // The first failure ends the stream: the transactions committed before it are still
  // delivered, nothing after it is read (the transaction it broke into never commits).
  const fail = (error: unknown) => {
    if (!ended && failure === null) {
      failure = binlogStreamError(error, from, target);
      void stop();
    }
    notify();
  };
  // Kept for good: zongji may report errors of its teardown after stop().
  client.on('error', fail);
  client.on('binlog', (event) => {
    if (ended || failure !== null) return;
    lastEventAt = Date.now();
    try {
      if (is(event, 'tablemap')) assembler.tableMap(event);
      else if (is(event, 'writerows')) assembler.inserts(event);
      else if (is(event, 'updaterows')) assembler.updates(event);
      else if (is(event, 'deleterows')) assembler.deletes(event);
      else if (is(event, 'xid') || is(event, 'xaprepare')) assembler.commit(event.nextPosition);
      else if (is(event, 'query')) assembler.query(event);
      else if (is(event, 'rotate')) assembler.rotate(event.binlogName);
      else {
        heartbeats ||= is(event, 'heartbeat');
        return;
      }
    } catch (error) {
      fail(error);
      return;
    }
    if (!paused && assembler.committedChanges > QUEUE_HIGH) {
      // The consumer is behind: hold the server back rather than fill memory.
      paused = true;
      client.connection?.pause();
    }
    notify();
  });

  // Aborting closes the connections at once, even while the consumer holds a batch and never
  // asks for the next; the iteration then returns at its next step.
  const end = () => {
    ended = true;
    void stop();
    notify();
  };

  signal.addEventListener('abort', end, { once: true });
  const detach = context.attach(end);
  const watchdog = setInterval(() => {
    if (!heartbeats || paused || Date.now() - lastEventAt < SILENCE_LIMIT_MS) return;
    fail(
      new SourceConnectionError(
        'source_connection_lost',
        'The source database stopped sending heartbeats on the change stream.',
        target,
        'HEARTBEAT_TIMEOUT',
      ),
    );
  }, HEARTBEAT_SECONDS * 1000);
  watchdog.unref();

  try {
    client.start({
      // Each reader of the binlog needs its own server id; the server drops an older
      // connection that uses the same one. High and random, away from real replicas' ids.
      serverId: randomInt(2_000_000_000, 4_294_967_295),
      filename: from.file,
      position: from.offset,
      includeEvents: EVENTS,
      includeSchema: { [options.database]: tables },
    });
    // Queued ahead of zongji's own statements on each connection (it sends them later).
    // MariaDB reads the first variable, MySQL 8.4 the second; unread user variables are inert.
    const nanoseconds = HEARTBEAT_SECONDS * 1e9;
    client.connection?.query(
      `SET @master_heartbeat_period = ${nanoseconds}, @source_heartbeat_period = ${nanoseconds}`,
      () => {},
    );
    client.ctrlConnection?.query(`SET SESSION wait_timeout = ${IDLE_CONTROL_SECONDS}`, () => {});

    let progress: CommittedChanges | null = null;
    let deliveredAt = Date.now();
    for (;;) {
      if (ended) return;
      const taken = assembler.take(MAX_BATCH_CHANGES);
      if (paused && assembler.committedChanges < QUEUE_LOW) {
        paused = false;
        client.connection?.resume();
      }
      if (taken !== null && taken.changes.length > 0) {
        progress = null;
        deliveredAt = Date.now();
        yield taken;
        continue;
      }
      progress = taken ?? progress;
      if (failure !== null) throw failure;
      const progressDue = deliveredAt + PROGRESS_INTERVAL_MS - Date.now();
      if (progress !== null && progressDue <= 0) {
        const batch = progress;
        progress = null;
        deliveredAt = Date.now();
        yield batch;
        continue;
      }
      await new Promise<void>((resolve) => {
        const timer = progress === null ? undefined : setTimeout(resolve, progressDue);
        wake = () => {
          clearTimeout(timer);
          resolve();
        };
      });
    }
  } finally {
    ended = true;
    signal.removeEventListener('abort', end);
    detach();
    clearInterval(watchdog);
    await stop();
  }
}
