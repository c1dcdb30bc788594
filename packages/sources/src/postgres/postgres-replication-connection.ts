import { Buffer } from 'node:buffer';
import type pg from 'pg';
import type { TlsNegotiation } from '../source-tls.ts';
import type { PostgresConnectorOptions } from './postgres-connection-options.ts';
import { postgresConnectionConfig } from './postgres-connection-options.ts';
import { loadPg } from './postgres-driver.ts';
import { decodePgoutput, type PgoutputMessage } from './postgres-pgoutput.ts';
import { Lsn } from './postgres-position.ts';
import { TEXT_TYPES, VALUE_TEXT_STARTUP_OPTIONS } from './postgres-session.ts';

/** What the walsender sends while streaming, decoded. */
export type WalMessage =
  | { readonly kind: 'data'; readonly message: PgoutputMessage }
  /** The server is at `walEnd` and has sent everything before it; maybe it wants a reply now. */
  | { readonly kind: 'keepalive'; readonly walEnd: Lsn; readonly replyRequested: boolean };

export interface StreamHandlers {
  /** Called for each message, in order, synchronously as it is read off the socket. */
  onMessage(message: WalMessage): void;
  /** The position to confirm when the server asks for a reply. */
  statusLsn(): Lsn;
  /** The stream ended: with the server's or the network's error, or `undefined` if it just ended. */
  onEnd(error: unknown): void;
}

/**
 * The slice of node-postgres's internal `Connection` that streaming needs: its typings leave out
 * the COPY sub-protocol, which is how the walsender and its client talk once streaming starts.
 */
interface CopyBothConnection {
  on(event: 'copyData', listener: (message: { chunk: Buffer }) => void): unknown;
  once(event: 'replicationStart', listener: () => void): unknown;
  sendCopyFromChunk(chunk: Buffer): void;
  readonly stream: { pause(): void; resume(): void };
}

/** Microseconds from the Unix epoch to PostgreSQL's epoch, 2000-01-01 UTC. */
const POSTGRES_EPOCH_MICROS = 946_684_800_000_000n;

/**
 * The Standby Status Update a client sends: everything up to `lsn` is written, flushed and
 * applied. For a logical slot the flushed position becomes its `confirmed_flush_lsn`, so the
 * server keeps WAL from there on and recycles what is older; 0/0 confirms nothing.
 */
export function standbyStatusUpdate(lsn: Lsn, now = Date.now()): Buffer {
  const message = Buffer.alloc(34);
  message[0] = 0x72; // r
  message.writeBigUInt64BE(lsn.value, 1); // written
  message.writeBigUInt64BE(lsn.value, 9); // flushed
  message.writeBigUInt64BE(lsn.value, 17); // applied
  message.writeBigInt64BE(BigInt(now) * 1000n - POSTGRES_EPOCH_MICROS, 25);
  message[33] = 0; // no reply wanted
  return message;
}

/** Decodes one CopyData message of the streaming protocol; null for kinds it does not know. */
export function walMessage(chunk: Buffer): WalMessage | null {
  if (chunk[0] === 0x77 /* w: XLogData */) {
    // start LSN, current end of WAL and send time (8 bytes each), then the pgoutput message
    return { kind: 'data', message: decodePgoutput(chunk.subarray(25)) };
  }
  if (chunk[0] === 0x6b /* k: primary keepalive */) {
    return { kind: 'keepalive', walEnd: Lsn.read(chunk, 1), replyRequested: chunk[17] === 1 };
  }
  return null;
}

/**
 * A `replication=database` connection: a walsender that runs replication commands
 * (CREATE_REPLICATION_SLOT, START_REPLICATION) and, as these connections allow since
 * PostgreSQL 10, plain SQL. It prints values with the same text settings as snapshots.
 */
export class PostgresReplicationConnection {
  readonly #client: pg.Client;
  #ended = false;

  private constructor(client: pg.Client) {
    this.#client = client;
  }

  static async connect(
    options: PostgresConnectorOptions,
    tls: TlsNegotiation,
  ): Promise<PostgresReplicationConnection> {
    const { Client } = await loadPg();
    return tls.connect(async (useTls) => {
      // `replication` is a start-up parameter node-postgres passes on, missing from its typings.
      const config: pg.ClientConfig & { replication: 'database' } = {
        ...postgresConnectionConfig(options, useTls),
        replication: 'database',
        options: VALUE_TEXT_STARTUP_OPTIONS,
        types: TEXT_TYPES,
      };
      const client = new Client(config);
      // A dropped connection emits 'error'; unheard, it would crash the process. Streams learn
      // of it from their START_REPLICATION query, which fails with the same error.
      client.on('error', () => {});
      const connection = new PostgresReplicationConnection(client);
      try {
        await client.connect();
      } catch (error) {
        await connection.end();
        throw error;
      }
      return connection;
    });
  }

  async query(sql: string): Promise<Record<string, unknown>[]> {
    const result = await this.#client.query<Record<string, unknown>>(sql);
    return result.rows;
  }

  get #wire(): CopyBothConnection {
    return this.#client.connection as unknown as CopyBothConnection;
  }

  /**
   * Runs START_REPLICATION and resolves once the server streams (or rejects with its refusal).
   * From then on every message goes to `handlers`, and the end of the stream too.
   */
  startStreaming(command: string, handlers: StreamHandlers): Promise<void> {
    const wire = this.#wire;
    let started = false;
    return new Promise<void>((resolve, reject) => {
      wire.once('replicationStart', () => {
        started = true;
        resolve();
      });
      wire.on('copyData', ({ chunk }) => {
        if (this.#ended) return;
        let message: WalMessage | null;
        try {
          message = walMessage(chunk);
        } catch (error) {
          handlers.onEnd(error);
          return;
        }
        if (!message) return;
        // Answered at once, whatever the consumer is doing: the walsender disconnects clients
        // that do not answer within wal_sender_timeout.
        if (message.kind === 'keepalive' && message.replyRequested) {
          this.sendStatus(handlers.statusLsn());
        }
        handlers.onMessage(message);
      });
      this.#client.query(command).then(
        () => {
          if (started) handlers.onEnd(undefined);
          else resolve(); // the server ended the stream at once; nothing to read
        },
        (error: unknown) => {
          if (started) handlers.onEnd(error);
          else reject(error);
        },
      );
    });
  }

  sendStatus(lsn: Lsn): void {
    if (!this.#ended) this.#wire.sendCopyFromChunk(standbyStatusUpdate(lsn));
  }

  /** Stops reading from the socket: the server's sends then block, which holds its decoding. */
  pause(): void {
    this.#wire.stream.pause();
  }

  resume(): void {
    this.#wire.stream.resume();
  }

  get ended(): boolean {
    return this.#ended;
  }

  /** Closes the connection; the walsender exits and releases its slot. Safe to call twice. */
  async end(): Promise<void> {
    if (this.#ended) return;
    this.#ended = true;
    try {
      await this.#client.end();
    } catch {
      // Already disconnected.
    }
  }
}
