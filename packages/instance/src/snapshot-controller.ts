import { randomUUID } from 'node:crypto';
import type { CompiledSchema, Generation } from '@replix/engine';
import type { SourceConnector } from '@replix/sources';
import type { Logger } from 'pino';
import { InstanceError } from './errors.ts';
import { type LoadProgress, loadSnapshot } from './snapshot-loader.ts';

/** `ok`, `degraded` and `cap_exceeded` are the spec's health values; the others are phases. */
export type HealthStatus = 'loading' | 'ok' | 'degraded' | 'cap_exceeded' | 'failed';

export interface ServedSnapshot {
  readonly generation: Generation;
  readonly swapCount: number;
  readonly ageMs: number;
}

export interface SnapshotControllerOptions {
  readonly memoryCapMb: number | null;
  readonly syncMode: 'cdc' | 'poll';
  readonly log: Logger;
}

/**
 * Owns the served snapshot: the initial load, reloads swapped in atomically (one reference,
 * `swapCount` + 1), the memory cap, and the replication pause flag. Queries take `current()`
 * once and keep that generation for their whole run.
 */
export class SnapshotController {
  readonly bootId = randomUUID();
  readonly schema: CompiledSchema;
  readonly #connector: SourceConnector;
  readonly #options: SnapshotControllerOptions;
  #generation: Generation | null = null;
  #swapCount = 0;
  #lastSyncAt = 0;
  #nextGenerationId = 1;
  #progress: LoadProgress;
  #failed: string | null = null;
  #reload: Promise<void> | null = null;
  #capExceeded = false;
  #paused = false;
  #lastReloadError: string | null = null;

  constructor(
    connector: SourceConnector,
    schema: CompiledSchema,
    options: SnapshotControllerOptions,
  ) {
    this.#connector = connector;
    this.schema = schema;
    this.#options = options;
    this.#progress = { tablesDone: 0, tablesTotal: schema.tables.length, rowsLoaded: 0 };
  }

  /** Loads the first snapshot. Until it is in, queries get 503 with the loading progress. */
  async start(): Promise<void> {
    const started = performance.now();
    try {
      const generation = await this.#load();
      this.#capExceeded = this.#overCap(generation);
      this.#install(generation, false);
      this.#options.log.info(
        {
          rows: this.#progress.rowsLoaded,
          tables: this.schema.tables.length,
          ms: Math.round(performance.now() - started),
          bytes: generation.byteSize(),
        },
        'snapshot loaded',
      );
    } catch (error) {
      this.#failed = 'The initial snapshot could not be loaded from the source.';
      this.#options.log.error({ err: error }, 'initial snapshot load failed');
      throw error;
    }
  }

  #load(): Promise<Generation> {
    const id = this.#nextGenerationId++;
    return loadSnapshot(this.#connector, this.schema, id, (progress) => {
      this.#progress = progress;
    });
  }

  #overCap(generation: Generation): boolean {
    const cap = this.#options.memoryCapMb;
    return cap !== null && generation.byteSize() > cap * 1024 * 1024;
  }

  #install(generation: Generation, isSwap: boolean): void {
    this.#generation = generation;
    if (isSwap) this.#swapCount += 1;
    this.#lastSyncAt = Date.now();
  }

  current(): ServedSnapshot | null {
    if (!this.#generation) return null;
    return {
      generation: this.#generation,
      swapCount: this.#swapCount,
      ageMs: Date.now() - this.#lastSyncAt,
    };
  }

  get loadProgress(): LoadProgress {
    return this.#progress;
  }

  get reloading(): boolean {
    return this.#reload !== null;
  }

  /**
   * Starts a full reload from the source, swapped in when complete. Fails at once with
   * `reload_busy` while one runs and `cap_degraded` when the snapshot is over its memory cap.
   */
  reload(): Promise<void> {
    if (this.#reload)
      throw new InstanceError(
        'reload_busy',
        'A reload is already running; retry once it completes.',
      );
    if (this.#capExceeded) {
      throw new InstanceError(
        'cap_degraded',
        'The snapshot is over its memory cap; resize the instance instead of reloading.',
      );
    }
    if (!this.#generation)
      throw new InstanceError('reload_busy', 'The initial snapshot is still loading.');
    const run = async () => {
      try {
        const generation = await this.#load();
        if (this.#overCap(generation)) {
          this.#capExceeded = true;
          this.#options.log.warn(
            { bytes: generation.byteSize() },
            'reloaded snapshot is over the memory cap; keeping the last good one',
          );
          return;
        }
        this.#install(generation, true);
        this.#lastReloadError = null;
        this.#options.log.info({ swapCount: this.#swapCount }, 'snapshot reloaded');
      } catch (error) {
        this.#lastReloadError = 'The last reload failed; the previous snapshot is still served.';
        this.#options.log.error({ err: error }, 'reload failed');
        throw error;
      } finally {
        this.#reload = null;
      }
    };
    this.#reload = run();
    return this.#reload;
  }

  pauseReplication(): void {
    this.#paused = true;
  }

  resumeReplication(): void {
    this.#paused = false;
  }

  get replicationPaused(): boolean {
    return this.#paused;
  }

  health(): HealthStatus {
    if (this.#failed) return 'failed';
    if (!this.#generation) return 'loading';
    if (this.#capExceeded) return 'cap_exceeded';
    if (this.#lastReloadError) return 'degraded';
    return 'ok';
  }

  /** The status document of `/health/detail` (and of 503 answers while loading). */
  detail(): Record<string, unknown> {
    const served = this.current();
    const status = this.health();
    return {
      status,
      boot_id: this.bootId,
      ...(status === 'loading' || status === 'failed'
        ? {
            loading: {
              tables_done: this.#progress.tablesDone,
              tables_total: this.#progress.tablesTotal,
              rows_loaded: this.#progress.rowsLoaded,
            },
          }
        : {}),
      ...(this.#failed ? { error: this.#failed } : {}),
      snapshot: served
        ? {
            generation: served.generation.id,
            swap_count: served.swapCount,
            age_ms: served.ageMs,
            bytes: served.generation.byteSize(),
            row_counts: served.generation.rowCounts(),
          }
        : null,
      memory: { cap_mb: this.#options.memoryCapMb, cap_exceeded: this.#capExceeded },
      reload: { running: this.reloading, last_error: this.#lastReloadError },
      replication: { mode: this.#options.syncMode, paused: this.#paused },
    };
  }
}
