import { randomUUID } from 'node:crypto';
import { performance } from 'node:perf_hooks';
import { getHeapStatistics } from 'node:v8';
import {
  type CompiledSchema,
  type Generation,
  nextGeneration,
  type RowChange,
  sameContent,
} from '@replix/engine';
import type { ReplicationPosition, SourceConnector } from '@replix/sources';
import type { Logger } from 'pino';
import { InstanceError } from '../errors.ts';
import {
  type MemoryLimits,
  processHeapLimitBytes,
  queryWorkingMemoryBytes,
} from '../threads/query-working-memory.ts';
import type { HealthStatus, ServedSnapshot, ServedState } from '../threads/served-state.ts';
import { type LoadProgress, loadSnapshot } from './snapshot-loader.ts';

const MiB = 1024 * 1024;
/**
 * How long a new generation that fits the cap on its own waits for running queries to
 * free their working memory before it is swapped in regardless: longer than a query's time
 * budget, so they have finished by then.
 */
const ROOM_WAIT_MS = 5_000;
const ROOM_POLL_MS = 20;

/** Where a generation stands against the memory cap. */
type CapFit = 'fits' | 'over_cap' | 'crowded_by_queries';

export type { HealthStatus, ServedSnapshot } from '../threads/served-state.ts';

export interface SnapshotControllerOptions {
  readonly memoryCapMb: number | null;
  readonly syncMode: 'cdc' | 'poll';
  readonly log: Logger;
  /** V8's heap limit; default this process's (`v8.getHeapStatistics().heap_size_limit`). */
  readonly heapLimitBytes?: number;
  /** Threads reading the snapshot's tables at once (`LoadOptions.threads`; default 1). */
  readonly loadThreads?: number;
}

/** What replication reports about itself for health and `/health/detail`. */
export interface ReplicationReport {
  /** A reason the instance is `degraded` (disconnected, lagging), or null. */
  readonly degradedReason: string | null;
  readonly detail: Readonly<Record<string, unknown>>;
}

/** Where the served snapshot came from at start: a checkpoint, or a full read of the source. */
export type SnapshotOrigin = 'checkpoint' | 'source';

/** A generation to start from instead of reading the source, and the position it is at. */
export interface StartingPoint {
  readonly generation: Generation;
  readonly position: ReplicationPosition | null;
}

/** A generation made by applying changes to the one before (what a leader feeds followers). */
export interface AppliedChanges {
  readonly previous: Generation;
  readonly next: Generation;
  readonly swapCount: number;
  readonly changes: ReadonlyMap<string, readonly RowChange[]>;
}

/** Why a full snapshot is taken: the first load, `POST /reload`, the safety net, poll mode, or lost history. */
export type ReloadReason = 'initial' | 'api' | 'safety_net' | 'poll' | 'position_expired';

/**
 * Owns the served snapshot: the initial load, full reloads and change flushes, each building
 * the next generation and swapping one reference (`swapCount` + 1); the memory cap; and the one
 * cycle (flush or reload) that may run at a time. Queries take `current()` once and keep that
 * generation for their whole run.
 */
export class SnapshotController implements ServedState {
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
  #cycle: 'flush' | 'reload' | null = null;
  #capExceeded = false;
  #lastReloadError: string | null = null;
  #reloads = 0;
  #lastReloadReason: ReloadReason | null = null;
  #replication: () => ReplicationReport = () => ({ degradedReason: null, detail: {} });
  #checkpoints: (() => Record<string, unknown>) | null = null;
  #startOver: (() => Promise<void>) | null = null;
  #origin: SnapshotOrigin | null = null;
  /** The replication position the served generation is at (null in poll mode). */
  #position: ReplicationPosition | null = null;
  /** Row changes applied since start: a checkpoint schedule counts them. */
  #changesApplied = 0;
  #queryBytesInFlight: () => number = () => 0;
  #clientHeldBytes: () => number = () => 0;
  /** A generation built and waiting for running queries to make room for it. */
  #pending: Generation | null = null;
  readonly #byteSizes = new WeakMap<Generation, number>();
  readonly #limits: MemoryLimits;
  readonly #reloadListeners: ((position: ReplicationPosition | null) => void)[] = [];
  readonly #installListeners: ((generation: Generation) => void)[] = [];
  readonly #appliedListeners: ((applied: AppliedChanges) => void)[] = [];

  constructor(
    connector: SourceConnector,
    schema: CompiledSchema,
    options: SnapshotControllerOptions,
  ) {
    this.#connector = connector;
    this.schema = schema;
    this.#options = options;
    this.#progress = { tablesDone: 0, tablesTotal: schema.tables.length, rowsLoaded: 0 };
    this.#limits = {
      heapLimitBytes: options.heapLimitBytes ?? processHeapLimitBytes(),
      memoryCapBytes: options.memoryCapMb === null ? null : options.memoryCapMb * MiB,
    };
  }

  /**
   * The query admission gate reports the working memory of the queries running through this
   * (`QueryAdmission.inFlightBytes`): the memory cap counts it beside the snapshot.
   */
  countQueryMemory(inFlightBytes: () => number): void {
    this.#queryBytesInFlight = inFlightBytes;
  }

  /** The bytes held for clients (part of the in-flight bytes), for `/health/detail`. */
  countClientMemory(heldBytes: () => number): void {
    this.#clientHeldBytes = heldBytes;
  }

  /** Bytes of the served snapshot plus a generation waiting to be swapped in. */
  snapshotBytes(): number {
    return (
      (this.#generation ? this.#bytesOf(this.#generation) : 0) +
      (this.#pending ? this.#bytesOf(this.#pending) : 0)
    );
  }

  /** The working memory queries may hold together now (`QueryAdmission`'s budget). */
  queryWorkingBytes(): number {
    return queryWorkingMemoryBytes(this.#limits, this.snapshotBytes());
  }

  /** Generations never change, so each one's size is summed once. */
  #bytesOf(generation: Generation): number {
    let bytes = this.#byteSizes.get(generation);
    if (bytes === undefined) {
      bytes = generation.byteSize();
      this.#byteSizes.set(generation, bytes);
    }
    return bytes;
  }

  /** Replication reports its state through this (health, `/health/detail`). */
  reportReplication(report: () => ReplicationReport): void {
    this.#replication = report;
  }

  /**
   * Checkpoints report their state through this: `/health/detail`'s `snapshot.checkpoint` (the
   * one started from) and `snapshot.checkpoints` (the writes since).
   */
  reportCheckpoints(report: () => Record<string, unknown>): void {
    this.#checkpoints = report;
  }

  /** The served generation and the replication position it is at; null before the first load. */
  servedAt(): { generation: Generation; position: ReplicationPosition | null } | null {
    return this.#generation ? { generation: this.#generation, position: this.#position } : null;
  }

  /** Row changes applied since start. */
  get changesApplied(): number {
    return this.#changesApplied;
  }

  /** Where the snapshot served since start came from; null before it is in. */
  get origin(): SnapshotOrigin | null {
    return this.#origin;
  }

  /** Called after every full snapshot with its position, so the change stream restarts there. */
  onSnapshot(listener: (position: ReplicationPosition | null) => void): void {
    this.#reloadListeners.push(listener);
  }

  /**
   * Called with every generation installed (the first load and each swap), before `start`,
   * `reload` or `flush` resolves: the query threads publish it from here.
   */
  onInstall(listener: (generation: Generation) => void): void {
    this.#installListeners.push(listener);
  }

  /** Called with each generation made by applying changes, after it is installed. */
  onApplied(listener: (applied: AppliedChanges) => void): void {
    this.#appliedListeners.push(listener);
  }

  /** When the served snapshot was last brought in sync with the source (epoch ms), or 0. */
  get lastSyncAt(): number {
    return this.#lastSyncAt;
  }

  /** The bytes of one generation (summed once per generation). */
  bytesOf(generation: Generation): number {
    return this.#bytesOf(generation);
  }

  /**
   * Loads the first snapshot: from `checkpoint` when it gives one (a generation saved earlier and
   * its position), otherwise from the source. Until it is in, queries get 503 with the loading
   * progress.
   */
  async start(checkpoint?: () => Promise<StartingPoint | undefined>): Promise<void> {
    const started = performance.now();
    this.#cycle = 'reload';
    try {
      const saved = await checkpoint?.();
      const { generation, position } = saved ?? (await this.#load());
      this.#origin = saved ? 'checkpoint' : 'source';
      if (saved) this.#nextGenerationId = generation.id + 1;
      this.#capExceeded = this.#overCap(generation);
      this.#position = position;
      this.#install(generation, false);
      this.#options.log.info(
        {
          origin: this.#origin,
          rows: Object.values(generation.rowCounts()).reduce((sum, rows) => sum + rows, 0),
          tables: this.schema.tables.length,
          ms: Math.round(performance.now() - started),
          bytes: generation.byteSize(),
          position: position?.toString(),
        },
        'snapshot loaded',
      );
      this.#cycle = null;
      for (const listener of this.#reloadListeners) listener(position);
    } catch (error) {
      this.#cycle = null;
      this.#failed = 'The initial snapshot could not be loaded from the source.';
      this.#options.log.error({ err: error }, 'initial snapshot load failed');
      throw error;
    }
  }

  #load() {
    const id = this.#nextGenerationId++;
    return loadSnapshot(
      this.#connector,
      this.schema,
      id,
      (progress) => {
        this.#progress = progress;
      },
      {
        withPosition: this.#options.syncMode === 'cdc',
        ...(this.#options.loadThreads === undefined ? {} : { threads: this.#options.loadThreads }),
      },
    );
  }

  #overCap(generation: Generation): boolean {
    return this.#capFit(generation) === 'over_cap';
  }

  /**
   * The memory cap holds the snapshot and the working memory of the queries running beside
   * it. A generation over the cap on its own is refused (`cap_exceeded`); one that fits alone
   * but not beside the running queries is `crowded_by_queries`: it waits for them to finish
   * (`#roomFor`) before it is swapped in.
   */
  #capFit(generation: Generation): CapFit {
    const cap = this.#limits.memoryCapBytes;
    if (cap === null) return 'fits';
    const bytes = this.#bytesOf(generation);
    if (bytes > cap) return 'over_cap';
    return bytes + this.#queryBytesInFlight() > cap ? 'crowded_by_queries' : 'fits';
  }

  /**
   * Waits, at most `ROOM_WAIT_MS`, until the running queries leave room for a new
   * generation. Meanwhile it counts as snapshot, so queries admitted meanwhile get less working
   * memory. The generation is already built: after the wait it is swapped in even if crowded,
   * which frees the previous one as its last queries end.
   */
  async #roomFor(generation: Generation): Promise<void> {
    this.#pending = generation;
    try {
      const deadline = performance.now() + ROOM_WAIT_MS;
      while (this.#capFit(generation) === 'crowded_by_queries' && performance.now() < deadline) {
        await new Promise((resolve) => setTimeout(resolve, ROOM_POLL_MS));
      }
    } finally {
      this.#pending = null;
    }
  }

  #install(generation: Generation, isSwap: boolean): void {
    this.#generation = generation;
    if (isSwap) this.#swapCount += 1;
    this.#lastSyncAt = Date.now();
    for (const listener of this.#installListeners) listener(generation);
  }

  /** The swaps since start (the served snapshot's `swapCount`). */
  get swapCount(): number {
    return this.#swapCount;
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

  /** True while a flush or a reload is mid-cycle. */
  get busy(): boolean {
    return this.#cycle !== null;
  }

  /**
   * `POST /reload`: a full reload from the source, swapped in when complete. Fails at once with
   * `reload_busy` while a flush or reload is mid-cycle and `cap_degraded` over the memory cap.
   */
  reload(): Promise<void> {
    // A follower never reads the source: it starts over from its leader's line instead.
    if (this.#startOver) return this.#startOver();
    if (this.#capExceeded) {
      throw new InstanceError(
        'cap_degraded',
        'The snapshot is over its memory cap; resize the instance instead of reloading.',
      );
    }
    if (this.#cycle !== null || !this.#generation) {
      throw new InstanceError(
        'reload_busy',
        'A reload or sync flush is mid-cycle; retry once it completes.',
      );
    }
    return this.#reload('api');
  }

  /** `reload()` as `ServedState.startReload`: a refusal rejects, `done` is the reload. */
  async startReload(): Promise<{ readonly done: Promise<void> }> {
    return { done: this.reload() };
  }

  /** A reload the instance starts itself; skipped (false) while another cycle runs. */
  reloadIfIdle(reason: Exclude<ReloadReason, 'initial' | 'api'>): Promise<boolean> {
    if (this.#cycle !== null || !this.#generation) return Promise.resolve(false);
    return this.#reload(reason).then(() => true);
  }

  async #reload(reason: ReloadReason): Promise<void> {
    this.#cycle = 'reload';
    let position: ReplicationPosition | null = null;
    try {
      const loaded = await this.#load();
      position = loaded.position;
      if (this.#capFit(loaded.generation) === 'crowded_by_queries') {
        await this.#roomFor(loaded.generation);
      }
      if (this.#overCap(loaded.generation)) {
        this.#capExceeded = true;
        this.#options.log.warn(
          { bytes: loaded.generation.byteSize(), reason },
          'reloaded snapshot is over the memory cap; keeping the last good one',
        );
      } else if (
        reason === 'poll' &&
        this.#generation &&
        sameContent(this.#generation, loaded.generation)
      ) {
        // A poll that found nothing changed swaps nothing; the snapshot is in sync again.
        this.#lastSyncAt = Date.now();
        this.#lastReloadError = null;
      } else {
        this.#capExceeded = false;
        this.#position = position;
        this.#origin = 'source';
        this.#install(loaded.generation, true);
        this.#lastReloadError = null;
        this.#reloads += 1;
        this.#lastReloadReason = reason;
        this.#options.log.info(
          { swapCount: this.#swapCount, reason, position: position?.toString() },
          'snapshot reloaded',
        );
      }
    } catch (error) {
      this.#lastReloadError = 'The last reload failed; the previous snapshot is still served.';
      this.#options.log.error({ err: error, reason }, 'reload failed');
      throw error;
    } finally {
      this.#cycle = null;
    }
    for (const listener of this.#reloadListeners) listener(position);
  }

  /**
   * A sync flush: applies buffered changes (by API table name) as one new generation and swaps
   * it in, unless there are none (no swap) or it would break the memory cap (the last good one
   * stays). `prepare` runs inside the cycle first (it may read the source). Returns false when
   * another cycle is running or the changes could not be applied, so the caller keeps them.
   * `position`, when given, is where the source is once these changes are applied.
   */
  async flush(
    prepare: () => Promise<ReadonlyMap<string, readonly RowChange[]>>,
    position?: ReplicationPosition | null,
  ): Promise<boolean> {
    if (this.#cycle !== null || !this.#generation) return false;
    this.#cycle = 'flush';
    try {
      const changes = await prepare();
      const current = this.#generation;
      let count = 0;
      for (const tableChanges of changes.values()) count += tableChanges.length;
      if (count > 0) {
        const next = nextGeneration(current, changes, this.#nextGenerationId++);
        if (this.#capFit(next) === 'crowded_by_queries') await this.#roomFor(next);
        if (this.#overCap(next)) {
          if (!this.#capExceeded)
            this.#options.log.warn(
              { bytes: this.#bytesOf(next) },
              'next generation is over the memory cap; keeping the last good one',
            );
          this.#capExceeded = true;
          return false;
        }
        this.#capExceeded = false;
        this.#changesApplied += count;
        if (position) this.#position = position;
        this.#install(next, true);
        const applied = { previous: current, next, swapCount: this.#swapCount, changes };
        for (const listener of this.#appliedListeners) listener(applied);
      } else {
        if (position) this.#position = position;
        this.#lastSyncAt = Date.now();
      }
      return true;
    } finally {
      this.#cycle = null;
    }
  }

  /**
   * A follower's step: builds generation `id` from the served one by the leader's `changes`
   * and installs it with the leader's `swapCount`. False when it does not follow on from
   * the served generation, another cycle runs, or it would break the memory cap.
   */
  async applyFollowed(
    previous: number,
    id: number,
    swapCount: number,
    changes: ReadonlyMap<string, readonly RowChange[]>,
  ): Promise<boolean> {
    const current = this.#generation;
    if (this.#cycle !== null || !current || current.id !== previous) return false;
    this.#cycle = 'flush';
    try {
      const next = nextGeneration(current, changes, id);
      if (this.#capFit(next) === 'crowded_by_queries') await this.#roomFor(next);
      if (this.#overCap(next)) {
        this.#capExceeded = true;
        return false;
      }
      this.#capExceeded = false;
      this.#nextGenerationId = id + 1;
      this.#swapCount = swapCount - 1;
      this.#install(next, true);
      return true;
    } finally {
      this.#cycle = null;
    }
  }

  /** A follower's start over: serves a checkpoint's generation in place of the one it has. */
  replaceWith(point: StartingPoint): void {
    this.#nextGenerationId = point.generation.id + 1;
    this.#position = point.position;
    this.#origin = 'checkpoint';
    this.#capExceeded = this.#overCap(point.generation);
    if (!this.#capExceeded) this.#install(point.generation, true);
  }

  /** A follower's `POST /reload`: `startOver` instead of a read of the source. */
  reloadBy(startOver: () => Promise<void>): void {
    this.#startOver = startOver;
  }

  /** A follower heard that the leader's generation it serves was in sync `ageMs` ago. */
  syncedAt(at: number): void {
    this.#lastSyncAt = Math.max(this.#lastSyncAt, at);
  }

  health(): HealthStatus {
    if (this.#failed) return 'failed';
    if (!this.#generation) return 'loading';
    if (this.#capExceeded) return 'cap_exceeded';
    if (this.#lastReloadError || this.#replication().degradedReason) return 'degraded';
    return 'ok';
  }

  /**
   * `memory` of `/health/detail`: the cap and whether the snapshot broke it; the heap limit and
   * use; the working memory queries hold now and may hold in all.
   */
  #memoryDetail(): Record<string, unknown> {
    const heap = getHeapStatistics();
    return {
      cap_mb: this.#options.memoryCapMb,
      cap_exceeded: this.#capExceeded,
      heap_limit_mb: Math.round(this.#limits.heapLimitBytes / MiB),
      heap_used_mb: Math.round(heap.used_heap_size / MiB),
      query_working_bytes: this.#queryBytesInFlight(),
      query_working_limit_bytes: this.queryWorkingBytes(),
      client_held_bytes: this.#clientHeldBytes(),
    };
  }

  /** The status document of `/health/detail` (and of 503 answers while loading). */
  detail(): Record<string, unknown> {
    const served = this.current();
    const status = this.health();
    const replication = this.#replication();
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
      ...(replication.degradedReason ? { degraded_reason: replication.degradedReason } : {}),
      snapshot: served
        ? {
            generation: served.generation.id,
            swap_count: served.swapCount,
            age_ms: served.ageMs,
            bytes: this.#bytesOf(served.generation),
            row_counts: served.generation.rowCounts(),
            origin: this.#origin,
            ...this.#checkpoints?.(),
          }
        : null,
      memory: this.#memoryDetail(),
      reload: {
        running: this.#cycle === 'reload',
        count: this.#reloads,
        last_reason: this.#lastReloadReason,
        last_error: this.#lastReloadError,
      },
      replication: { mode: this.#options.syncMode, ...replication.detail },
    };
  }
}
