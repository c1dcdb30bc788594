import { SourceConnectionError, type SourceError } from '../errors.ts';
import type { ChangeBatch, ChangeStreamRequest, SourceChange } from '../replication.ts';
import type { TlsNegotiation } from '../source-tls.ts';
import { PostgresChangeDecoder, type TypeNamer } from './postgres-change-decoder.ts';
import { type PostgresConnectorOptions, postgresTarget } from './postgres-connection-options.ts';
import { Lsn } from './postgres-position.ts';
import {
  PostgresReplicationConnection,
  type StreamHandlers,
  type WalMessage,
} from './postgres-replication-connection.ts';
import {
  isSlotBusy,
  replicationConnectErrorFrom,
  replicationErrorFrom,
} from './postgres-replication-errors.ts';
import { quotePostgresIdentifier } from './postgres-sql.ts';
import { WalQueue } from './postgres-wal-queue.ts';

/** A running stream as its connector sees it: acknowledgements go in, and it can be ended. */
export interface StatusSink {
  sendStatus(lsn: Lsn): void;
  /** Closes the stream's connection; its iteration then returns. */
  end(): Promise<void>;
}

/** What a WAL stream needs from its connector. */
export interface WalStreamContext {
  readonly options: PostgresConnectorOptions;
  /** The connector's TLS negotiation: the replication connection uses TLS as its pools do. */
  readonly tls: TlsNegotiation;
  /** The slot's and the publication's name. */
  readonly name: string;
  readonly schema: string;
  /** Rejects when the slot cannot give the changes after `from` for `tables`. */
  checkSlot(tables: readonly string[], from: Lsn): Promise<void>;
  readonly typeNames: TypeNamer;
  /** The last position acknowledged: what every status update confirms. */
  acknowledged(): Lsn;
  /** Registers a running stream for acknowledgements; returns its unregistration. */
  attach(sink: StatusSink): () => void;
}

/** Changes per batch, at most, unless one transaction alone holds more (never split). */
const MAX_BATCH_CHANGES = 10_000;
/** Below the walsender's default timeout (60 s), so a paused or idle stream stays connected. */
const STATUS_INTERVAL_MS = 10_000;
/** How long a stream waits for the slot to be released by a walsender that is exiting. */
const SLOT_BUSY_WAIT_MS = 5_000;
const QUEUE_HIGH = 20_000;
const QUEUE_LOW = 5_000;

const sleep = (ms: number) => new Promise((resolve) => setTimeout(resolve, ms));

/**
 * The WalStream: streams committed changes of the followed tables from `request.from` over a
 * replication connection (START_REPLICATION … LOGICAL, pgoutput protocol 1).
 *
 * Batches hold whole transactions, in commit order, each batch's position the end of its last
 * commit: PostgreSQL skips every transaction whose commit lies before the position a stream
 * starts from, so resuming there replays none of it. When the server reports progress over WAL
 * that held no change to the followed tables (a keepalive between transactions), an empty batch
 * carries the new position, so that acknowledging it lets the server recycle that WAL.
 *
 * Nothing is acknowledged here; the connector's `acknowledge` is the only source of confirmed
 * positions, sent with every status update.
 */
export async function* postgresWalStream(
  context: WalStreamContext,
  request: ChangeStreamRequest,
): AsyncGenerator<ChangeBatch, void, undefined> {
  const { signal } = request;
  if (signal.aborted) return;
  const from = Lsn.of(request.from);
  const target = postgresTarget(context.options);
  const fromText = from.serialize();

  let connection: PostgresReplicationConnection | undefined;
  const queue = new WalQueue<WalMessage>({
    high: QUEUE_HIGH,
    low: QUEUE_LOW,
    pause: () => connection?.pause(),
    resume: () => connection?.resume(),
  });
  const stop = () => {
    queue.close();
    void connection?.end();
  };
  signal.addEventListener('abort', stop, { once: true });
  let detach = () => {};
  let timer: NodeJS.Timeout | undefined;

  try {
    await context.checkSlot(
      request.tables.map((table) => table.table),
      from,
    );
    connection = await startStreaming(context, from, signal, {
      onMessage: (message) => queue.push(message),
      statusLsn: () => context.acknowledged(),
      onEnd(error) {
        // Ended by us: aborted, or the connector closed or dropped replication.
        if (signal.aborted || connection?.ended) {
          queue.close();
          return;
        }
        queue.fail(
          error === undefined
            ? new SourceConnectionError(
                'source_connection_lost',
                'The source database ended the change stream.',
                target,
                undefined,
              )
            : replicationErrorFrom(error, target, fromText, 'streaming changes'),
        );
      },
    });
    if (signal.aborted) return;
    const live = connection;
    detach = context.attach(live);
    timer = setInterval(() => live.sendStatus(context.acknowledged()), STATUS_INTERVAL_MS);
    timer.unref();

    const decoder = new PostgresChangeDecoder(context.schema, request.tables, context.typeNames);
    /** The open transaction's changes; null between transactions. */
    let transaction: SourceChange[] | null = null;
    let changes: SourceChange[] = [];
    let end: Lsn | null = null;
    let delivered = from;

    for (;;) {
      const item = await queue.next();
      if (item === null) return; // aborted
      if (item.kind === 'keepalive') {
        if (transaction === null && item.walEnd.compare(end ?? delivered) > 0) end = item.walEnd;
      } else {
        const message = item.message;
        switch (message.tag) {
          case 'begin':
            transaction = [];
            break;
          case 'commit':
            if (transaction) for (const change of transaction) changes.push(change);
            transaction = null;
            end = message.endLsn;
            break;
          case 'relation': {
            const change = await decoder.relation(message);
            if (change) (transaction ?? changes).push(change);
            break;
          }
          case 'ignored':
            break;
          default:
            for (const change of decoder.changes(message)) (transaction ?? changes).push(change);
        }
      }
      if (
        end !== null &&
        transaction === null &&
        (queue.size === 0 || changes.length >= MAX_BATCH_CHANGES)
      ) {
        const batch: ChangeBatch = { changes, position: end };
        delivered = end;
        changes = [];
        end = null;
        yield batch;
        if (signal.aborted) return;
      }
    }
  } finally {
    signal.removeEventListener('abort', stop);
    clearInterval(timer);
    detach();
    queue.close();
    await connection?.end();
  }
}

/**
 * Connects and starts streaming. A slot still held by a walsender that is exiting (a stream of
 * ours just stopped) is waited for; other refusals are checked against the slot's state first,
 * so that a slot dropped or invalidated meanwhile reads as an expired position.
 */
async function startStreaming(
  context: WalStreamContext,
  from: Lsn,
  signal: AbortSignal,
  handlers: StreamHandlers,
): Promise<PostgresReplicationConnection> {
  const target = postgresTarget(context.options);
  const name = quotePostgresIdentifier(context.name);
  const command =
    `START_REPLICATION SLOT ${name} LOGICAL ${from} ` +
    `(proto_version '1', publication_names '${context.name}')`;
  const deadline = Date.now() + SLOT_BUSY_WAIT_MS;
  for (;;) {
    let connection: PostgresReplicationConnection;
    try {
      connection = await PostgresReplicationConnection.connect(context.options, context.tls);
    } catch (error) {
      throw replicationConnectErrorFrom(error, target);
    }
    try {
      await connection.startStreaming(command, handlers);
      return connection;
    } catch (error) {
      await connection.end();
      if (isSlotBusy(error) && Date.now() < deadline && !signal.aborted) {
        await sleep(50);
        continue;
      }
      const mapped: SourceError = replicationErrorFrom(
        error,
        target,
        from.serialize(),
        'starting replication',
      );
      if (!isSlotBusy(error)) await context.checkSlot([], from);
      throw mapped;
    }
  }
}
