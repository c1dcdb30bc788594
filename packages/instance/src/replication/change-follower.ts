import type { CompiledSchema } from '@replix/engine';
import {
  type ChangeBatch,
  type ChangeStreamRequest,
  PositionExpiredError,
  type ReplicationPosition,
  type SourceConnector,
} from '@replix/sources';
import type { Logger } from 'pino';
import type { ReplicationReport, SnapshotController } from '../snapshot/snapshot-controller.ts';
import { sourceColumnsOf } from '../snapshot/snapshot-loader.ts';
import { mapChanges, type RowFetcher } from './change-mapper.ts';
import { ForeignKeyGraph } from './foreign-key-graph.ts';

export interface ChangeFollowerOptions {
  readonly connector: SourceConnector;
  readonly schema: CompiledSchema;
  readonly controller: SnapshotController;
  readonly fetchRows: RowFetcher;
  readonly reconnectPolicy: 'resume' | 'shutdown';
  readonly intervalMs: number;
  readonly log: Logger;
  /** Called once when the stream is lost and the policy is `shutdown`. */
  readonly onFatal: (reason: string) => void;
  /**
   * Whether each applied position is acknowledged to the source (default true). False when
   * checkpoints are written: the source must keep its history back to the newest checkpoint,
   * which acknowledges its own position once it is on disk.
   */
  readonly acknowledgeApplied?: boolean;
}

/** Changes buffered beyond this wait for a tick before more are read (backpressure). */
const MAX_BUFFERED_CHANGES = 500_000;
const BACKOFF_MS = [250, 500, 1000, 2000, 5000, 10_000, 30_000];

const sleep = (ms: number, signal?: AbortSignal) =>
  new Promise<void>((resolve) => {
    const timer = setTimeout(resolve, ms);
    signal?.addEventListener('abort', () => {
      clearTimeout(timer);
      resolve();
    });
  });

function describeError(error: unknown): string {
  const code = (error as { code?: unknown }).code;
  const message = error instanceof Error ? error.message : String(error);
  return typeof code === 'string' ? `${message} (${code})` : message;
}

/**
 * Follows the source's change stream from the position of the served snapshot: buffers whole
 * transactions as they arrive and, at each sync tick, applies them as one new generation,
 * then acknowledges the position. Reconnects with backoff from the last applied position (or
 * exits under the `shutdown` policy); when that history is gone it asks for a full reload.
 */
export class ChangeFollower {
  readonly #options: ChangeFollowerOptions;
  #position: ReplicationPosition | null = null;
  #buffer: ChangeBatch[] = [];
  #bufferedChanges = 0;
  #run = 0;
  #abort: AbortController | null = null;
  #state: 'starting' | 'streaming' | 'reconnecting' | 'reloading' | 'paused' | 'stopped' =
    'starting';
  #pauseRequested = false;
  #lastError: string | null = null;
  #reconnects = 0;
  #lastReceivedAt: number | null = null;
  #tick: Promise<void> | null = null;
  readonly #schemaChanges = new Map<string, string>();
  /** The source's foreign-key actions, when its change stream leaves their effects out. */
  readonly #foreignKeys: ForeignKeyGraph | null;

  constructor(options: ChangeFollowerOptions) {
    this.#options = options;
    const graph = options.connector.changesIncludeForeignKeyActions
      ? null
      : new ForeignKeyGraph(options.schema);
    this.#foreignKeys = graph && !graph.empty ? graph : null;
  }

  /** (Re)starts following from `position`, the position of the snapshot just installed. */
  follow(position: ReplicationPosition | null): void {
    this.#abort?.abort();
    this.#buffer = [];
    this.#bufferedChanges = 0;
    this.#position = position;
    if (!position) {
      this.#state = 'stopped';
      this.#lastError = 'The snapshot carries no change-stream position.';
      return;
    }
    if (this.#state === 'paused' || this.#state === 'stopped') return;
    const run = ++this.#run;
    void this.#stream(run);
  }

  async #stream(run: number): Promise<void> {
    const { connector, schema, log } = this.#options;
    // A flush in flight may still advance the position: start from where it leaves it.
    await this.#tick;
    let attempt = 0;
    // Views have no change stream; `ViewRefresher` re-reads them.
    const tables: ChangeStreamRequest['tables'] = schema.tables
      .filter((table) => table.kind === 'table')
      .map((table): ChangeStreamRequest['tables'][number] => ({
        table: table.sourceName,
        columns: sourceColumnsOf(table),
      }))
      // Deletes and key changes of these unserved tables set off actions on served ones.
      .concat(this.#foreignKeys?.unservedParents() ?? []);
    while (run === this.#run && this.#position) {
      const abort = new AbortController();
      this.#abort = abort;
      this.#state = 'streaming';
      try {
        for await (const batch of connector.streamChanges({
          tables,
          from: this.#position,
          signal: abort.signal,
        })) {
          if (run !== this.#run) return;
          this.#buffer.push(batch);
          this.#bufferedChanges += batch.changes.length;
          this.#lastReceivedAt = Date.now();
          attempt = 0;
          this.#lastError = null;
          while (this.#bufferedChanges > MAX_BUFFERED_CHANGES && run === this.#run)
            await sleep(this.#options.intervalMs);
        }
        if (abort.signal.aborted || run !== this.#run) return;
        throw new Error('The change stream ended.');
      } catch (error) {
        if (abort.signal.aborted || run !== this.#run) return;
        this.#lastError = describeError(error);
        if (error instanceof PositionExpiredError) {
          log.warn(
            { position: this.#position.toString() },
            'the change history needed to resume is gone; taking a full snapshot',
          );
          this.#state = 'reloading';
          // The reload's snapshot restarts the stream from its own position (follow()).
          // A busy cycle is waited out a tick at a time; a failed reload backs off.
          let failures = 0;
          while (run === this.#run) {
            const reloaded = await this.#options.controller.reloadIfIdle('position_expired').then(
              (done) => done,
              () => {
                failures += 1;
                return false;
              },
            );
            if (reloaded) break;
            const backoff =
              failures === 0
                ? this.#options.intervalMs
                : BACKOFF_MS[Math.min(failures - 1, BACKOFF_MS.length - 1)];
            await sleep(backoff as number);
          }
          return;
        }
        if (this.#options.reconnectPolicy === 'shutdown') {
          log.error(
            { reason: this.#lastError },
            'lost the source change stream; cdc_reconnect_policy is shutdown',
          );
          this.#state = 'stopped';
          this.#options.onFatal(this.#lastError);
          return;
        }
        this.#state = 'reconnecting';
        this.#reconnects += 1;
        // Unapplied changes are read again from the last applied position.
        await this.#tick;
        this.#buffer = [];
        this.#bufferedChanges = 0;
        const wait = BACKOFF_MS[Math.min(attempt++, BACKOFF_MS.length - 1)] as number;
        log.warn(
          { reason: this.#lastError, retryInMs: wait },
          'lost the source change stream; reconnecting',
        );
        await sleep(wait);
      }
    }
  }

  /** A sync tick: applies what arrived since the last one as one generation. */
  tick(): Promise<void> {
    if (this.#tick) return this.#tick;
    this.#tick = this.#flush().finally(() => {
      this.#tick = null;
    });
    return this.#tick;
  }

  async #flush(): Promise<void> {
    const { controller, schema, connector, log } = this.#options;
    if (this.#pauseRequested && this.#state !== 'paused') {
      // Pause takes effect here; the stream resumes from the last applied position.
      this.#state = 'paused';
      this.#run += 1;
      this.#abort?.abort();
      this.#buffer = [];
      this.#bufferedChanges = 0;
      return;
    }
    if (this.#state === 'paused' || this.#state === 'stopped') return;
    if (this.#state !== 'streaming' && this.#buffer.length === 0) return;
    const batches = this.#buffer;
    const count = this.#bufferedChanges;
    this.#buffer = [];
    this.#bufferedChanges = 0;
    const position = batches.at(-1)?.position ?? this.#position;
    let applied = false;
    try {
      applied = await controller.flush(
        async () => {
          const mapped = await mapChanges(
            schema,
            batches.flatMap((batch) => batch.changes),
            this.#options.fetchRows,
            (table, row) => controller.current()?.generation.hasKey(table.name, row) ?? false,
            this.#foreignKeys
              ? {
                  graph: this.#foreignKeys,
                  generation: controller.current()?.generation ?? null,
                }
              : undefined,
          );
          if (mapped.foreignKeyReReads.size > 0) {
            log.info(
              {
                constraints: Object.fromEntries(
                  [...mapped.foreignKeyReReads].map(([name, tables]) => [name, [...tables]]),
                ),
              },
              'foreign-key actions re-read from the source: their effect is not derivable from served rows',
            );
          }
          if (mapped.staleReads > 0) {
            log.debug(
              { rows: mapped.staleReads },
              'filtered rows read again: the source showed them older than its change stream',
            );
          }
          for (const { table, detail } of mapped.schemaChanges) {
            if (!this.#schemaChanges.has(table))
              log.warn({ table, detail }, 'source schema changed; serving the compiled schema');
            this.#schemaChanges.set(table, detail);
          }
          return mapped.changes;
        },
        batches.length > 0 ? position : null,
      );
    } catch (error) {
      log.error({ err: error }, 'sync flush failed; will retry');
    }
    if (!applied) {
      this.#buffer = [...batches, ...this.#buffer];
      this.#bufferedChanges += count;
      return;
    }
    if (batches.length > 0 && position) {
      this.#position = position;
      if (this.#options.acknowledgeApplied === false) return;
      connector.acknowledge(position).catch((error: unknown) => {
        log.warn({ reason: describeError(error) }, 'could not acknowledge the applied position');
      });
    }
  }

  /** Pauses at the next tick: the snapshot freezes and queries keep being served. */
  pause(): void {
    this.#pauseRequested = true;
  }

  /** Resumes from the saved position, catching up with everything committed meanwhile. */
  resume(): void {
    this.#pauseRequested = false;
    if (this.#state !== 'paused') return;
    this.#state = 'starting';
    const run = ++this.#run;
    void this.#stream(run);
  }

  get paused(): boolean {
    return this.#pauseRequested || this.#state === 'paused';
  }

  stop(): void {
    this.#state = 'stopped';
    this.#run += 1;
    this.#abort?.abort();
  }

  report(): ReplicationReport {
    const lagMs =
      this.#buffer.length > 0 && this.#lastReceivedAt ? Date.now() - this.#lastReceivedAt : 0;
    const lagging =
      this.#buffer.length > 0 && lagMs > Math.max(10_000, 5 * this.#options.intervalMs);
    let degradedReason: string | null = null;
    if (this.#state === 'reconnecting')
      degradedReason = `Disconnected from the source: ${this.#lastError ?? 'reconnecting'}.`;
    else if (this.#state === 'reloading')
      degradedReason = 'The change history was lost; taking a full snapshot.';
    else if (this.#state === 'stopped' && this.#lastError)
      degradedReason = `Replication stopped: ${this.#lastError}`;
    else if (lagging)
      degradedReason = `Lagging: ${this.#bufferedChanges} changes wait to be applied.`;
    return {
      degradedReason,
      detail: {
        paused: this.paused,
        state: this.#state,
        position: this.#position?.toString() ?? null,
        buffered_changes: this.#bufferedChanges,
        reconnects: this.#reconnects,
        last_error: this.#lastError,
        schema_changes: [...this.#schemaChanges].map(([table, detail]) => ({ table, detail })),
      },
    };
  }
}
