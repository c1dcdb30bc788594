import type { SourceSchema } from '@replix/engine';
import type pg from 'pg';
import type { SnapshotOptions, SnapshotReader, SourceConnector } from '../connector.ts';
import { ReplicationError, type SourceTarget, sourceErrorFrom } from '../errors.ts';
import type {
  ChangeBatch,
  ChangeStreamRequest,
  ReplicationPosition,
  ReplicationReadiness,
} from '../replication.ts';
import type { RowsRequest } from '../rows-request.ts';
import type { TlsNegotiation } from '../source-tls.ts';
import {
  type PostgresConnectorOptions,
  postgresConnectionConfig,
  postgresTarget,
  postgresTlsNegotiation,
} from './postgres-connection-options.ts';
import { loadPg } from './postgres-driver.ts';
import { introspectPostgres } from './postgres-introspector.ts';
import type { RelationColumn } from './postgres-pgoutput.ts';
import { Lsn, NO_LSN } from './postgres-position.ts';
import { readPostgresRows } from './postgres-read-rows.ts';
import { PostgresReplicationConnection } from './postgres-replication-connection.ts';
import {
  isSlotBusy,
  replicationConnectErrorFrom,
  replicationErrorFrom,
} from './postgres-replication-errors.ts';
import { postgresReplicationName } from './postgres-replication-name.ts';
import {
  postgresReplicationFacts,
  postgresReplicationReadiness,
} from './postgres-replication-readiness.ts';
import {
  createPublication,
  createSlotWithSnapshot,
  dropPublication,
  dropSlot,
} from './postgres-replication-setup.ts';
import { TEXT_TYPES, VALUE_TEXT_STARTUP_OPTIONS } from './postgres-session.ts';
import { readSlotState, slotProblem } from './postgres-slot-check.ts';
import { openPostgresSnapshot } from './postgres-snapshot.ts';
import {
  postgresWalStream,
  type StatusSink,
  type WalStreamContext,
} from './postgres-wal-stream.ts';

const TYPE_NAMES_SQL = `
SELECT pg_catalog.format_type(t.oid, t.mod) AS name
FROM unnest($1::oid[], $2::int4[]) WITH ORDINALITY AS t(oid, mod, n)
ORDER BY t.n`;

const ADVANCE_SQL = `
SELECT pg_catalog.pg_replication_slot_advance(slot_name, $2::pg_lsn)
FROM pg_catalog.pg_replication_slots
WHERE slot_name = $1 AND confirmed_flush_lsn < $2::pg_lsn`;

const sleep = (ms: number) => new Promise((resolve) => setTimeout(resolve, ms));

/** One schema of a PostgreSQL database as a Replix source. */
export class PostgresConnector implements SourceConnector {
  readonly backend = 'postgres';
  /** Logical replication carries the cascaded rows. */
  readonly changesIncludeForeignKeyActions = true;
  readonly snapshotShareable = true;
  /** The replication slot's and the publication's name (`replix_…`). */
  readonly replicationName: string;
  readonly #options: PostgresConnectorOptions;
  readonly #target: SourceTarget;
  readonly #tls: TlsNegotiation;
  readonly #readers = new Set<SnapshotReader>();
  /** Connections of the change streams running now: acknowledgements go through them. */
  readonly #streams = new Set<StatusSink>();
  #acknowledged: Lsn = NO_LSN;
  #pool: Promise<pg.Pool> | undefined;
  #rowsPool: Promise<pg.Pool> | undefined;

  constructor(options: PostgresConnectorOptions) {
    this.#options = options;
    this.#target = postgresTarget(options);
    this.#tls = postgresTlsNegotiation(options);
    this.replicationName = postgresReplicationName(options);
  }

  /** The schema whose tables this connector reads. */
  get schema(): string {
    return this.#options.schema ?? 'public';
  }

  /**
   * A pool made on first use with TLS as the connector's negotiation says. An idle pooled
   * client whose connection drops emits 'error' on the pool; unheard, it would crash the
   * process. The pool discards that client, and the next query reconnects.
   */
  async #newPool(extra: pg.PoolConfig): Promise<pg.Pool> {
    const { Pool } = await loadPg();
    return this.#tls.pool(
      (useTls) => {
        const pool = new Pool({ ...postgresConnectionConfig(this.#options, useTls), ...extra });
        pool.on('error', () => {});
        return pool;
      },
      (pool) => pool.query('SELECT 1'),
      (pool) => pool.end(),
    );
  }

  /** A small pool for metadata queries, made on first use; snapshots never borrow from it. */
  #metadataPool(): Promise<pg.Pool> {
    if (!this.#pool) {
      const created = this.#newPool({ max: 2 });
      // A pool that could not be made (server down) is tried again by the next call.
      created.catch(() => {
        if (this.#pool === created) this.#pool = undefined;
      });
      this.#pool = created;
    }
    return this.#pool;
  }

  /** Runs metadata work, turning whatever it throws into a `SourceError` with a safe message. */
  async #metadata<T>(action: string, work: (pool: pg.Pool) => Promise<T>): Promise<T> {
    try {
      return await work(await this.#metadataPool());
    } catch (error) {
      throw sourceErrorFrom(error, this.#target, action);
    }
  }

  /**
   * Current rows by primary key or change column (see `RowsRequest`), on a pool whose sessions
   * print values exactly as the snapshot's do.
   */
  async readRows(request: RowsRequest): Promise<unknown[][]> {
    if (!this.#rowsPool) {
      const created = this.#newPool({
        types: TEXT_TYPES,
        options: VALUE_TEXT_STARTUP_OPTIONS,
        max: 2,
      });
      created.catch(() => {
        if (this.#rowsPool === created) this.#rowsPool = undefined;
      });
      this.#rowsPool = created;
    }
    const rowsPool = this.#rowsPool;
    try {
      return await readPostgresRows(await rowsPool, this.schema, request);
    } catch (error) {
      throw sourceErrorFrom(error, this.#target, `reading rows of table "${request.table}"`);
    }
  }

  introspect(): Promise<SourceSchema> {
    return this.#metadata('introspecting the schema', (pool) =>
      introspectPostgres(pool, this.schema),
    );
  }

  async openSnapshot(options: SnapshotOptions = {}): Promise<SnapshotReader> {
    let reader: SnapshotReader | undefined;
    const onClose = () => {
      if (reader) this.#readers.delete(reader);
    };
    const joiners = options.joiners ?? 0;
    reader = options.withPosition
      ? await this.#openSnapshotWithPosition(options.tables, onClose, joiners)
      : await openPostgresSnapshot(this.#options, this.#tls, onClose, undefined, joiners);
    this.#readers.add(reader);
    return reader;
  }

  /**
   * Publication first, then a fresh slot whose exported snapshot the reader imports: the reader
   * sees exactly the transactions committed before the slot's consistent point, and a stream
   * from that point delivers exactly the ones after it. A slot left from before is dropped,
   * since its position belongs to an older snapshot.
   */
  async #openSnapshotWithPosition(
    tables: readonly string[] | undefined,
    onClose: () => void,
    joiners: number,
  ): Promise<SnapshotReader> {
    const name = this.replicationName;
    const facts = await this.#metadata('checking the replication settings', (pool) =>
      postgresReplicationFacts(pool, name),
    );
    const readiness = postgresReplicationReadiness(facts);
    if (!readiness.ready) {
      throw new ReplicationError(
        'replication_not_ready',
        'The source database is not set up for change data capture.',
        { issues: readiness.issues },
      );
    }
    const followed = tables ?? (await this.introspect()).tables.map((table) => table.name);
    await this.#metadata('creating the publication', async (pool) => {
      await dropSlot(pool, name);
      await createPublication(pool, name, this.schema, followed, facts.serverVersionNum);
    });

    let connection: PostgresReplicationConnection | undefined;
    let slotCreated = false;
    try {
      connection = await PostgresReplicationConnection.connect(this.#options, this.#tls).catch(
        (error) => {
          throw replicationConnectErrorFrom(error, this.#target);
        },
      );
      const exported = await createSlotWithSnapshot(connection, name, facts.serverVersionNum);
      slotCreated = true;
      return await openPostgresSnapshot(this.#options, this.#tls, onClose, exported, joiners);
    } catch (error) {
      // A slot nobody streams from keeps all WAL from its position: never leave one behind.
      if (slotCreated) {
        await this.#metadataPool()
          .then((pool) => dropSlot(pool, name))
          .catch(() => {});
      }
      throw sourceErrorFrom(error, this.#target, 'creating the replication slot');
    } finally {
      await connection?.end();
    }
  }

  checkReplication(): Promise<ReplicationReadiness> {
    return this.#metadata('checking the replication settings', async (pool) =>
      postgresReplicationReadiness(await postgresReplicationFacts(pool, this.replicationName)),
    );
  }

  streamChanges(request: ChangeStreamRequest): AsyncIterable<ChangeBatch> {
    return postgresWalStream(this.#walStreamContext(), request);
  }

  #walStreamContext(): WalStreamContext {
    const name = this.replicationName;
    return {
      options: this.#options,
      tls: this.#tls,
      name,
      schema: this.schema,
      checkSlot: async (tables, from) => {
        const state = await this.#metadata('checking the replication slot', (pool) =>
          readSlotState(pool, name, this.schema),
        );
        const problem = slotProblem(name, state, tables, from.serialize());
        if (problem) throw problem;
      },
      typeNames: (columns: readonly RelationColumn[]) =>
        this.#metadata('reading column types', async (pool) => {
          const { rows } = await pool.query<{ name: string }>(TYPE_NAMES_SQL, [
            columns.map((column) => column.typeOid),
            columns.map((column) => column.typeMod),
          ]);
          return rows.map((row) => row.name);
        }),
      acknowledged: () => this.#acknowledged,
      attach: (sink) => {
        this.#streams.add(sink);
        return () => this.#streams.delete(sink);
      },
    };
  }

  /**
   * Confirms `position` to the server: through the running stream's connection when there is
   * one (a standby status update), otherwise by advancing the slot with SQL. Positions only
   * move forward; an older one confirms nothing new, and neither does a slot that is gone (the
   * next stream reports that).
   */
  async acknowledge(position: ReplicationPosition): Promise<void> {
    const lsn = Lsn.of(position);
    this.#acknowledged = this.#acknowledged.max(lsn);
    if (this.#streams.size > 0) {
      for (const stream of this.#streams) stream.sendStatus(this.#acknowledged);
      return;
    }
    const deadline = Date.now() + 5_000;
    for (;;) {
      try {
        await (await this.#metadataPool()).query(ADVANCE_SQL, [
          this.replicationName,
          lsn.toString(),
        ]);
        return;
      } catch (error) {
        // A stream of ours that just stopped may hold the slot for a moment longer.
        if (isSlotBusy(error) && Date.now() < deadline) {
          await sleep(50);
          continue;
        }
        throw replicationErrorFrom(error, this.#target, lsn.serialize(), 'acknowledging');
      }
    }
  }

  positionFromString(text: string): ReplicationPosition {
    return Lsn.parse(text);
  }

  async dropReplication(): Promise<void> {
    await this.#endStreams();
    await this.#metadata('dropping the replication slot', async (pool) => {
      await dropSlot(pool, this.replicationName);
      await dropPublication(pool, this.replicationName);
    });
  }

  /** Ends this connector's running streams; their iterations return. */
  async #endStreams(): Promise<void> {
    const streams = [...this.#streams];
    this.#streams.clear();
    await Promise.allSettled(streams.map((stream) => stream.end()));
  }

  async close(): Promise<void> {
    const pool = this.#pool;
    const rowsPool = this.#rowsPool;
    this.#pool = undefined;
    this.#rowsPool = undefined;
    const readers = [...this.#readers];
    await Promise.allSettled([
      this.#endStreams(),
      ...readers.map((reader) => reader.close()),
      pool?.then((opened) => opened.end()),
      rowsPool?.then((opened) => opened.end()),
    ]);
  }
}
