import type { Logger } from 'pino';
import type { ReplicationReport, SnapshotController } from '../snapshot/snapshot-controller.ts';
import type { ChangeFollower } from './change-follower.ts';
import type { IncrementalPoller } from './incremental-poller.ts';

export interface SyncSchedulerOptions {
  readonly controller: SnapshotController;
  /** The change follower in `cdc` mode; none in `poll` mode, where each tick re-reads the source. */
  readonly follower: ChangeFollower | null;
  /** Poll mode with `sync.change_column`: each tick reads only what changed. */
  readonly poller: IncrementalPoller | null;
  readonly intervalMs: number;
  /** A full reload every this many ms; 0 for none. */
  readonly safetyNetMs: number;
  readonly log: Logger;
}

/**
 * Drives the sync ticks (apply buffered changes, or in poll mode re-read the source), the
 * safety-net reloads, and pause/resume, which take effect at the next tick.
 */
export class SyncScheduler {
  readonly #options: SyncSchedulerOptions;
  readonly #timers: NodeJS.Timeout[] = [];
  #pollPaused = false;
  #polling = false;
  #lastPollError: string | null = null;

  constructor(options: SyncSchedulerOptions) {
    this.#options = options;
  }

  start(): void {
    const { intervalMs, safetyNetMs, follower, controller, log } = this.#options;
    this.#timers.push(
      setInterval(() => {
        if (follower) void follower.tick();
        else void this.#poll();
      }, intervalMs),
    );
    if (safetyNetMs > 0) {
      this.#timers.push(
        setInterval(() => {
          if (this.paused) return;
          controller.reloadIfIdle('safety_net').catch((error: unknown) => {
            log.error({ err: error }, 'safety-net reload failed');
          });
        }, safetyNetMs),
      );
    }
  }

  async #poll(): Promise<void> {
    if (this.#pollPaused || this.#polling) return;
    this.#polling = true;
    try {
      if (this.#options.poller) await this.#options.poller.poll();
      else await this.#options.controller.reloadIfIdle('poll');
      this.#lastPollError = null;
    } catch (error) {
      this.#lastPollError = error instanceof Error ? error.message : String(error);
    } finally {
      this.#polling = false;
    }
  }

  pause(): void {
    if (this.#options.follower) this.#options.follower.pause();
    else this.#pollPaused = true;
  }

  resume(): void {
    if (this.#options.follower) this.#options.follower.resume();
    else this.#pollPaused = false;
  }

  get paused(): boolean {
    return this.#options.follower ? this.#options.follower.paused : this.#pollPaused;
  }

  report(): ReplicationReport {
    if (this.#options.follower) return this.#options.follower.report();
    return {
      degradedReason: this.#lastPollError ? `The last poll failed: ${this.#lastPollError}` : null,
      detail: {
        paused: this.#pollPaused,
        state: this.#pollPaused ? 'paused' : 'polling',
        last_error: this.#lastPollError,
      },
    };
  }

  stop(): void {
    for (const timer of this.#timers) clearInterval(timer);
    this.#options.follower?.stop();
  }
}
