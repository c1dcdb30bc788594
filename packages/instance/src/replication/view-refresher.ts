import { performance } from 'node:perf_hooks';
import type { CompiledTable, RowChange } from '@replix/engine';
import { SourceError } from '@replix/sources';
import type { Logger } from 'pino';
import type { ReplicationReport, SnapshotController } from '../snapshot/snapshot-controller.ts';
import { sameViewRows } from './same-view-rows.ts';

/** Reads every current row of a view (within its `where`), in stored column order. */
export type ViewReader = (view: CompiledTable) => Promise<unknown[][]>;

export interface ViewRefresherOptions {
  readonly controller: SnapshotController;
  /** The served views (`kind` other than `table`), each with its `refreshIntervalS`. */
  readonly views: readonly CompiledTable[];
  readonly readView: ViewReader;
  /** Replication paused: views wait too, so the whole snapshot stays frozen. */
  readonly paused: () => boolean;
  readonly log: Logger;
}

/** How one view's refreshes went, for `/health/detail`. */
export interface ViewRefreshState {
  readonly table: string;
  readonly kind: string;
  readonly refresh_interval: number;
  /** ISO time the served rows were read (a refresh or a full snapshot); null before any. */
  readonly last_refresh_at: string | null;
  /** How long the last refresh took to read the view, in ms; null before any. */
  readonly last_read_ms: number | null;
  readonly refreshes: number;
  readonly last_error: string | null;
}

/** A flush refused because another cycle runs is retried this often until the next refresh. */
const BUSY_RETRY_MS = 50;

const sleep = (ms: number) => new Promise((resolve) => setTimeout(resolve, ms));

/** A message safe for `/health/detail`: a connector's own (never SQL or hosts) or a fixed one. */
function describe(error: unknown): string {
  if (error instanceof SourceError) return `${error.message} (${error.code})`;
  return 'The view could not be read from the source.';
}

/**
 * Views have no change stream: each one is re-read whole every `refreshIntervalS` seconds and
 * its rows replace the served ones in one new generation, swapped in like any sync flush. A
 * failed read keeps the last rows served and is retried at the next interval.
 */
export class ViewRefresher {
  readonly #options: ViewRefresherOptions;
  readonly #state = new Map<
    string,
    { readAt: number | null; readMs: number | null; count: number; error: string | null }
  >();
  readonly #timers = new Map<string, NodeJS.Timeout>();
  #stopped = false;

  constructor(options: ViewRefresherOptions) {
    this.#options = options;
    for (const view of options.views) {
      this.#state.set(view.name, { readAt: null, readMs: null, count: 0, error: null });
    }
  }

  /** A full snapshot read every view too: that counts as their latest refresh. */
  snapshotLoaded(at = Date.now()): void {
    for (const state of this.#state.values()) state.readAt = at;
  }

  start(): void {
    for (const view of this.#options.views) this.#schedule(view);
  }

  #schedule(view: CompiledTable): void {
    if (this.#stopped) return;
    const ms = (view.refreshIntervalS ?? 60) * 1000;
    this.#timers.set(
      view.name,
      setTimeout(() => {
        void this.refresh(view).finally(() => this.#schedule(view));
      }, ms),
    );
  }

  /** Re-reads one view and swaps its rows in; false when it was skipped or failed. */
  async refresh(view: CompiledTable): Promise<boolean> {
    const state = this.#state.get(view.name);
    if (!state || this.#options.paused()) return false;
    const { controller, log } = this.#options;
    const readAt = Date.now();
    const started = performance.now();
    let rows: unknown[][];
    try {
      rows = await this.#options.readView(view);
      state.readMs = Math.round(performance.now() - started);
    } catch (error) {
      state.error = describe(error);
      log.warn({ view: view.sourceName, reason: state.error }, 'view refresh failed');
      return false;
    }
    const served = controller.current();
    if (served && sameViewRows(served.generation, view, rows)) {
      state.readAt = readAt;
      state.count += 1;
      state.error = null;
      return true;
    }
    const changes = new Map<string, RowChange[]>([
      [view.name, [{ op: 'truncate' }, ...rows.map((row): RowChange => ({ op: 'insert', row }))]],
    ]);
    // Another cycle (a change flush, a reload) may hold the snapshot: wait it out, but not
    // past the next refresh, which reads newer rows anyway.
    const deadline = readAt + (view.refreshIntervalS ?? 60) * 1000;
    while (!this.#stopped) {
      if (await controller.flush(async () => changes)) {
        state.readAt = readAt;
        state.count += 1;
        state.error = null;
        return true;
      }
      if (Date.now() + BUSY_RETRY_MS >= deadline) break;
      await sleep(BUSY_RETRY_MS);
    }
    return false;
  }

  /** `replication.views` of `/health/detail`, and a reason to be degraded when one failed. */
  report(): { views: ViewRefreshState[]; degradedReason: string | null } {
    const views = this.#options.views.map((view): ViewRefreshState => {
      const state = this.#state.get(view.name);
      return {
        table: view.name,
        kind: view.kind,
        refresh_interval: view.refreshIntervalS ?? 60,
        last_refresh_at: state?.readAt ? new Date(state.readAt).toISOString() : null,
        last_read_ms: state?.readMs ?? null,
        refreshes: state?.count ?? 0,
        last_error: state?.error ?? null,
      };
    });
    const failed = views.find((view) => view.last_error !== null);
    return {
      views,
      degradedReason: failed
        ? `The last refresh of view "${failed.table}" failed: ${failed.last_error}`
        : null,
    };
  }

  stop(): void {
    this.#stopped = true;
    for (const timer of this.#timers.values()) clearTimeout(timer);
    this.#timers.clear();
  }
}

/** The replication report with the views' refreshes added (`replication.views`). */
export function withViewReport(
  report: ReplicationReport,
  refresher: ViewRefresher | null,
): ReplicationReport {
  if (!refresher) return report;
  const views = refresher.report();
  return {
    degradedReason: report.degradedReason ?? views.degradedReason,
    detail: { ...report.detail, views: views.views },
  };
}
