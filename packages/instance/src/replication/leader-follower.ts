import type { Buffer } from 'node:buffer';
import { get, type IncomingMessage } from 'node:http';
import type { RowChange } from '@replix/engine';
import type { Logger } from 'pino';
import type {
  ReplicationReport,
  SnapshotController,
  StartingPoint,
} from '../snapshot/snapshot-controller.ts';
import { type FeedFrame, type FeedRestart, FrameReader } from './change-feed.ts';

export interface LeaderFollowerOptions {
  /** The leader replica's private address (`REPLIX_FOLLOW_URL`). */
  readonly leaderUrl: string;
  /** An admin key of the database: the feed is an admin route. */
  readonly adminKey: string;
  readonly controller: SnapshotController;
  /** The leader's checkpoint of that name, or undefined when it is gone or unusable. */
  readonly loadCheckpoint: (name: string) => Promise<StartingPoint | undefined>;
  readonly log: Logger;
}

const BACKOFF_MS = [100, 250, 500, 1000, 2000, 5000];
/** A leader with no checkpoint to start from yet is asked again this often. */
const WAIT_MS = 250;

const sleep = (ms: number, signal: AbortSignal) =>
  new Promise<void>((resolve) => {
    const timer = setTimeout(resolve, ms);
    signal.addEventListener('abort', () => {
      clearTimeout(timer);
      resolve();
    });
  });

/**
 * A follower replica's replication: it never reads the source. It starts from a checkpoint
 * of the leader's line, then applies the leader's feed (`GET /internal/changes`) generation by
 * generation, so it serves the very generations the leader serves, with the same ids and
 * `swap_count`. When the feed no longer holds its generation it loads the checkpoint the
 * leader names; when the leader is gone it keeps serving what it has (its age grows) and asks
 * again with backoff.
 */
export class LeaderFollower {
  readonly #options: LeaderFollowerOptions;
  readonly #stopping = new AbortController();
  /** The leader boot whose line the served generation is on; null: start over first. */
  #boot: string | null = null;
  #state: 'starting' | 'following' | 'reconnecting' | 'restarting' | 'stopped' = 'starting';
  #lastError: string | null = null;
  #reconnects = 0;
  #restarts = 0;
  /** The feed's response being read, so a start over can end it. */
  #reading: IncomingMessage | null = null;

  constructor(options: LeaderFollowerOptions) {
    this.#options = options;
  }

  /** The first generation: the checkpoint the leader names, once it names one. */
  async startingPoint(): Promise<StartingPoint> {
    for (let attempt = 0; ; attempt++) {
      const point = await this.#restartPoint().catch((error: unknown) => {
        this.#lastError = describe(error);
        return undefined;
      });
      if (point) return point;
      if (this.#stopping.signal.aborted) throw new Error('The follower stopped while starting.');
      await sleep(Math.min(WAIT_MS * (attempt + 1), 2000), this.#stopping.signal);
    }
  }

  /** Follows the feed until `stop`. */
  start(): void {
    void this.#run();
  }

  /**
   * Starts over from the checkpoint the leader names now (a follower's reload: after the
   * leader's own, its feed starts over anyway). Resolves at once; the run loop does it.
   */
  async startOver(): Promise<void> {
    this.#boot = null;
    this.#reading?.destroy();
  }

  stop(): void {
    this.#state = 'stopped';
    this.#stopping.abort();
  }

  async #run(): Promise<void> {
    const { signal } = this.#stopping;
    let attempt = 0;
    while (!signal.aborted) {
      try {
        if (this.#boot === null) {
          this.#state = 'restarting';
          const point = await this.#restartPoint();
          if (!point) {
            await sleep(WAIT_MS, signal);
            continue;
          }
          this.#options.controller.replaceWith(point);
          this.#restarts += 1;
          if (this.#options.controller.current()?.generation !== point.generation) {
            // Over the memory cap: the last generation stays; asking again at once would spin.
            this.#boot = null;
            await sleep(BACKOFF_MS.at(-1) as number, signal);
            continue;
          }
        }
        const ended = await this.#follow(() => {
          attempt = 0;
        });
        if (ended === 'restart') this.#boot = null;
        // A new connection may land on the leader's main thread; a start over waits its turn.
        await sleep(ended === 'restart' ? WAIT_MS : 20, signal);
      } catch (error) {
        if (signal.aborted) return;
        this.#state = 'reconnecting';
        this.#reconnects += 1;
        this.#lastError = describe(error);
        const wait = BACKOFF_MS[Math.min(attempt++, BACKOFF_MS.length - 1)] as number;
        this.#options.log.warn(
          { reason: this.#lastError, retryInMs: wait },
          'lost the leader replica; keeping the last generation',
        );
        await sleep(wait, signal);
      }
    }
  }

  /**
   * Reads the feed from the served generation on. Resolves when it ends: `restart` when the
   * leader says to start over (or a frame does not follow on), `again` to ask anew.
   */
  async #follow(onConnected: () => void): Promise<'restart' | 'again'> {
    const { controller, leaderUrl } = this.#options;
    const served = controller.current();
    if (!served || this.#boot === null) return 'restart';
    const response = await this.#get(
      `${leaderUrl}/internal/changes?boot=${encodeURIComponent(this.#boot)}&after=${served.generation.id}`,
    );
    if (response.statusCode === 409) {
      response.destroy();
      return 'restart';
    }
    // A query thread of the leader took the connection (the feed is its main thread's): a
    // new connection may reach the main thread.
    if (response.statusCode === 404) {
      response.destroy();
      return 'again';
    }
    if (response.statusCode !== 200) {
      response.destroy();
      throw new Error(`The leader answered ${response.statusCode}.`);
    }
    this.#state = 'following';
    this.#lastError = null;
    onConnected();
    this.#reading = response;
    const reader = new FrameReader();
    try {
      for await (const chunk of response as AsyncIterable<Buffer>) {
        for (const frame of reader.push(chunk)) {
          if (!(await this.#apply(frame))) {
            response.destroy();
            return 'restart';
          }
        }
      }
    } catch (error) {
      // `startOver` ended the response: not a lost leader.
      if (this.#boot === null) return 'restart';
      throw error;
    } finally {
      this.#reading = null;
    }
    return 'again';
  }

  /** Applies one frame; false when it does not follow on from the served generation. */
  async #apply(frame: FeedFrame): Promise<boolean> {
    const { controller } = this.#options;
    if (frame.kind === 'synced') {
      if (controller.current()?.generation.id === frame.generation && frame.ageMs >= 0)
        controller.syncedAt(Date.now() - frame.ageMs);
      return true;
    }
    const changes = new Map<string, readonly RowChange[]>(frame.changes);
    return controller.applyFollowed(frame.previous, frame.generation, frame.swapCount, changes);
  }

  /** The leader's named checkpoint, loaded; undefined while it names none (or it is gone). */
  async #restartPoint(): Promise<StartingPoint | undefined> {
    const response = await this.#get(`${this.#options.leaderUrl}/internal/changes`);
    let text = '';
    for await (const chunk of response as AsyncIterable<Buffer>) {
      text += chunk;
      if (text.length > 64 * 1024) break;
    }
    response.destroy();
    let restart: FeedRestart | undefined;
    try {
      restart = (JSON.parse(text) as { restart?: FeedRestart }).restart;
    } catch {
      restart = undefined;
    }
    if (response.statusCode !== 409 || !restart) return undefined;
    if (restart.checkpoint === null) return undefined;
    const point = await this.#options.loadCheckpoint(restart.checkpoint);
    if (!point || point.generation.id !== restart.generation) return undefined;
    this.#boot = restart.boot;
    return point;
  }

  /** A GET on a connection of its own: never one a query thread of the leader holds. */
  #get(url: string): Promise<IncomingMessage> {
    return new Promise((resolve, reject) => {
      const request = get(url, {
        agent: false,
        headers: { authorization: `Bearer ${this.#options.adminKey}` },
        signal: this.#stopping.signal,
      });
      request.once('response', resolve);
      request.once('error', reject);
    });
  }

  report(): ReplicationReport {
    const degradedReason =
      this.#state === 'reconnecting'
        ? `The leader replica cannot be reached: ${this.#lastError ?? 'reconnecting'}.`
        : null;
    return {
      degradedReason,
      detail: {
        role: 'follower',
        state: this.#state,
        leader_boot: this.#boot,
        reconnects: this.#reconnects,
        restarts: this.#restarts,
        last_error: this.#lastError,
      },
    };
  }
}

function describe(error: unknown): string {
  const cause = (error as { cause?: { code?: unknown } }).cause;
  const message = error instanceof Error ? error.message : String(error);
  return typeof cause?.code === 'string' ? `${message} (${cause.code})` : message;
}
