import { Buffer } from 'node:buffer';
import { deserialize, serialize } from 'node:v8';
import type { RowChange } from '@replix/engine';

/**
 * What the leader replica sends its followers (docs/replication.md, "Replicas that follow"):
 * each generation it installs as the changes that made it from the one before, so a follower
 * that holds the one before builds the very same generation; and, when nothing changed, how
 * fresh the served one is.
 */
export type FeedFrame =
  | {
      readonly kind: 'generation';
      readonly previous: number;
      readonly generation: number;
      /** The leader's `swap_count` once it installed it: followers show the same. */
      readonly swapCount: number;
      /** The changes by API table name, as the leader applied them. */
      readonly changes: readonly (readonly [string, readonly RowChange[]])[];
    }
  | { readonly kind: 'synced'; readonly generation: number; readonly ageMs: number };

type GenerationFrame = Extract<FeedFrame, { kind: 'generation' }>;

/** Where a follower must start over: the checkpoint of the leader's own line to load. */
export interface FeedRestart {
  /** The leader's boot: a follower asks with it, and the feed refuses another boot's. */
  readonly boot: string;
  /** A checkpoint whose generation this feed follows on from; null until there is one. */
  readonly checkpoint: string | null;
  readonly generation: number | null;
}

/** The feed keeps at most this many generations… */
const MAX_FRAMES = 5_000;
/**
 * …and at most this many row changes (a few tens of megabytes of rows): past either the oldest
 * go. The default checkpoint schedule writes one every 100,000 changes, so a checkpoint to
 * start over from stays inside; an overflow asks for one at once.
 */
const MAX_CHANGES = 200_000;

/**
 * The leader's feed of the generations it installs, kept in memory for its followers. A
 * follower holding any generation from the oldest kept to the latest receives the ones after
 * it, then each new one as it is installed. One holding another (behind the window, or of
 * another boot of the leader) starts over from the newest checkpoint the leader wrote (or
 * started from) while its generation is still in the window.
 */
export class ChangeFeed {
  readonly boot: string;
  #frames: GenerationFrame[] = [];
  #changes = 0;
  /** The generation the kept frames follow on from; null before the first snapshot. */
  #oldest: number | null = null;
  #latest: number | null = null;
  /** The newest checkpoint of a generation in the window, to start over from. */
  #checkpoint: { name: string; generation: number } | null = null;
  readonly #listeners = new Set<(frame: FeedFrame) => void>();
  readonly #overflow: () => void;

  /** `overflow` is called when the window lost its checkpoint: a new one is needed. */
  constructor(boot: string, overflow: () => void) {
    this.boot = boot;
    this.#overflow = overflow;
  }

  /**
   * A generation from a full read (the start's, a reload's), or from `checkpoint`: what came
   * before no longer leads to it, and followers start over.
   */
  restart(generation: number, checkpoint: string | null): void {
    this.#frames = [];
    this.#changes = 0;
    this.#oldest = generation;
    this.#latest = generation;
    this.#checkpoint = checkpoint === null ? null : { name: checkpoint, generation };
    for (const listener of this.#listeners) listener({ kind: 'synced', generation, ageMs: -1 });
    this.#listeners.clear();
  }

  /** A checkpoint of `generation` was written: followers may start over from it. */
  checkpointed(generation: number, name: string): void {
    if (this.#oldest === null || this.#latest === null) return;
    if (generation < this.#oldest || generation > this.#latest) return;
    this.#checkpoint = { name, generation };
  }

  /** A generation installed by applying `changes` to `previous`. */
  publish(frame: GenerationFrame): void {
    if (this.#latest === null || frame.previous !== this.#latest) return;
    this.#frames.push(frame);
    this.#changes += changesOf(frame);
    this.#latest = frame.generation;
    while (this.#frames.length > MAX_FRAMES || this.#changes > MAX_CHANGES) {
      const oldest = this.#frames.shift() as GenerationFrame;
      this.#changes -= changesOf(oldest);
      this.#oldest = oldest.generation;
    }
    if (this.#checkpoint && this.#oldest !== null && this.#checkpoint.generation < this.#oldest) {
      this.#checkpoint = null;
      this.#overflow();
    }
    for (const listener of this.#listeners) listener(frame);
  }

  /** The served generation is in sync with the source as of `ageMs` ago. */
  synced(generation: number, ageMs: number): void {
    if (generation !== this.#latest) return;
    for (const listener of this.#listeners) listener({ kind: 'synced', generation, ageMs });
  }

  /**
   * The frames after `generation` of boot `boot`, and from then on each new one through
   * `listener` (until `stop`, or until a restart ends the stream with a `synced` frame of age
   * -1); or where to start over.
   */
  follow(
    boot: string,
    generation: number,
    listener: (frame: FeedFrame) => void,
  ): { frames: FeedFrame[]; stop: () => void } | FeedRestart {
    const held =
      boot === this.boot &&
      this.#oldest !== null &&
      this.#latest !== null &&
      generation >= this.#oldest &&
      generation <= this.#latest;
    if (!held) return this.restartPoint();
    this.#listeners.add(listener);
    return {
      frames: this.#frames.filter((frame) => frame.generation > generation),
      stop: () => this.#listeners.delete(listener),
    };
  }

  /** The checkpoint a follower with nothing to follow on from loads. */
  restartPoint(): FeedRestart {
    return {
      boot: this.boot,
      checkpoint: this.#checkpoint?.name ?? null,
      generation: this.#checkpoint?.generation ?? null,
    };
  }

  /** For `/health/detail`: what the feed holds and who follows it. */
  report(): Record<string, unknown> {
    return {
      followers: this.#listeners.size,
      oldest_generation: this.#oldest,
      latest_generation: this.#latest,
      generations_held: this.#frames.length,
      changes_held: this.#changes,
      checkpoint: this.#checkpoint?.name ?? null,
    };
  }
}

function changesOf(frame: GenerationFrame): number {
  let count = 0;
  for (const [, changes] of frame.changes) count += changes.length;
  return count;
}

/**
 * A frame on the wire: 4 bytes of length, then the frame in V8's serialization, which keeps
 * every value a row holds (bigints, Buffers, NaN) as it is.
 */
export function encodeFrame(frame: FeedFrame): Buffer {
  const body = serialize(frame);
  const head = Buffer.allocUnsafe(4);
  head.writeUInt32BE(body.length, 0);
  return Buffer.concat([head, body]);
}

/** Splits a byte stream into frames; bytes of an unfinished frame wait for the next chunk. */
export class FrameReader {
  #pending: Buffer = Buffer.alloc(0);

  push(chunk: Uint8Array): FeedFrame[] {
    this.#pending =
      this.#pending.length === 0 ? Buffer.from(chunk) : Buffer.concat([this.#pending, chunk]);
    const frames: FeedFrame[] = [];
    while (this.#pending.length >= 4) {
      const length = this.#pending.readUInt32BE(0);
      if (this.#pending.length < 4 + length) break;
      frames.push(deserialize(this.#pending.subarray(4, 4 + length)) as FeedFrame);
      this.#pending = this.#pending.subarray(4 + length);
    }
    return frames;
  }
}
