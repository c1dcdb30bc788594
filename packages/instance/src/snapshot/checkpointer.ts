import { readdir, rm } from 'node:fs/promises';
import { join } from 'node:path';
import { performance } from 'node:perf_hooks';
import {
  type CompiledSchema,
  exportGeneration,
  type Generation,
  importGeneration,
} from '@replix/engine';
import type { ReplicationPosition } from '@replix/sources';
import type { Logger } from 'pino';
import {
  type CheckpointManifest,
  newestCheckpoint,
  pruneCheckpoints,
  readCheckpoint,
  writeCheckpoint,
} from './checkpoint-files.ts';
import {
  CHECKPOINT_WRITE_BYTES_PER_SECOND,
  type CheckpointSchedule,
} from './checkpoint-schedule.ts';
import type { SnapshotController, StartingPoint } from './snapshot-controller.ts';

/** The newest checkpoint and one to fall back to when it turns out damaged. */
const KEEP = 2;
/** How often the schedule is looked at. */
const CHECK_MS = 1_000;

export interface CheckpointerOptions {
  /** The folder holding this database's checkpoints. */
  readonly dir: string;
  /** The schema config's fingerprint (`checkpointFingerprint`). */
  readonly fingerprint: string;
  readonly controller: SnapshotController;
  readonly schedule: CheckpointSchedule;
  readonly log: Logger;
  /** Reads a stored position back (the connector's `positionFromString`). */
  readonly parsePosition: (text: string) => ReplicationPosition;
  /**
   * Tells the source it may drop history up to a position a checkpoint now holds (the
   * connector's `acknowledge`: PostgreSQL's slot then recycles WAL), or undefined.
   */
  readonly acknowledge?: (position: ReplicationPosition) => Promise<void>;
  /**
   * Where checkpoints are kept for any node to load (`S3Checkpoints`): each one written goes up
   * before the source is told of it, and a start first brings down the ones the folder lacks.
   */
  readonly remote?: RemoteCheckpoints;
}

/** The part of `S3Checkpoints` the checkpointer uses. */
export interface RemoteCheckpoints {
  list(): Promise<string[]>;
  upload(folder: string, name: string): Promise<void>;
  download(name: string, folder: string): Promise<void>;
  prune(keep: number): Promise<string[]>;
}

interface Written {
  readonly name: string;
  readonly generation: Generation;
  readonly position: string | null;
  readonly at: number;
  readonly changesApplied: number;
  readonly bytes: number;
  readonly ms: number;
}

/**
 * Writes checkpoints of the served snapshot into one folder, and finds the one to start from.
 *
 * A checkpoint is written after every full read of the source (the start's and each reload's),
 * on the schedule (time or changes, whichever comes first, and only when something changed),
 * and at `close` before a planned stop. One is written at a time, from the generation's own
 * memory a slice at a time between requests: it holds no copy of the snapshot, only the
 * generation it writes, which stays alive until written. After each write the older ones
 * beyond the newest two are removed, and the source is told it may drop history up to the
 * older of the two, so that falling back to it still finds every change since.
 */
export class Checkpointer {
  readonly #options: CheckpointerOptions;
  #timer: NodeJS.Timeout | null = null;
  #writing: Promise<void> | null = null;
  #last: Written | null = null;
  #loaded: { name: string; manifest: CheckpointManifest } | null = null;
  #dueNow = false;
  #written = 0;
  #lastError: string | null = null;
  #closed = false;
  /** The positions of the checkpoints kept, oldest first: the source keeps history back to the first. */
  #keptPositions: ReplicationPosition[] = [];
  readonly #writtenListeners: ((generation: number, name: string) => void)[] = [];

  constructor(options: CheckpointerOptions) {
    this.#options = options;
    // A full read of the source (the start's or a reload's) is checkpointed at once.
    options.controller.onSnapshot(() => {
      if (options.controller.origin === 'source') this.#dueNow = true;
    });
  }

  /**
   * The newest usable checkpoint as the generation to start from, or undefined (then the
   * source is read). Each newer one that could not be used is logged with why.
   */
  async startingPoint(schema: CompiledSchema): Promise<StartingPoint | undefined> {
    try {
      return await this.#startingPoint(schema);
    } catch (error) {
      // The folder unreadable, say: the source is still there to read.
      this.#options.log.warn({ err: error }, 'checkpoints unreadable; reading the source');
      return undefined;
    }
  }

  async #startingPoint(schema: CompiledSchema): Promise<StartingPoint | undefined> {
    const { dir, fingerprint, log } = this.#options;
    const started = performance.now();
    await this.#bringDown();
    const { checkpoint, skipped } = await newestCheckpoint(dir, fingerprint);
    for (const { name, error } of skipped) {
      log.warn(
        { checkpoint: name, problem: error.problem, reason: error.message },
        'checkpoint not used',
      );
    }
    if (!checkpoint) {
      log.info(
        { skipped: skipped.length },
        skipped.length > 0
          ? 'no usable checkpoint; reading the source'
          : 'no checkpoint yet; reading the source',
      );
      return undefined;
    }
    const { manifest } = checkpoint;
    let position: ReplicationPosition | null = null;
    try {
      position = manifest.position === null ? null : this.#options.parsePosition(manifest.position);
    } catch {
      log.warn({ problem: 'damaged' }, 'checkpoint position unreadable; reading the source');
      return undefined;
    }
    const generation = importGeneration(schema, checkpoint.generation);
    if (position) this.#keptPositions = [position];
    const { name } = checkpoint;
    this.#loaded = { name, manifest };
    this.#last = {
      name,
      generation,
      position: manifest.position,
      at: Date.parse(manifest.writtenAt),
      changesApplied: 0,
      bytes: manifest.files['buffers.bin']?.bytes ?? 0,
      ms: 0,
    };
    log.info(
      {
        checkpoint: name,
        position: position?.toString(),
        ageMs: Date.now() - Date.parse(manifest.writtenAt),
        ms: Math.round(performance.now() - started),
      },
      'starting from a checkpoint',
    );
    return { generation, position };
  }

  /** The checkpoint started from, if the start took one. */
  get loadedName(): string | null {
    return this.#loaded?.name ?? null;
  }

  /** Called with each checkpoint written (and uploaded): its generation's id and its name. */
  onWritten(listener: (generation: number, name: string) => void): void {
    this.#writtenListeners.push(listener);
  }

  /**
   * The checkpoint `name` (a follower loads the one its leader names), or undefined when it
   * is not there or not usable.
   */
  async named(name: string, schema: CompiledSchema): Promise<StartingPoint | undefined> {
    const { dir, fingerprint, log, remote } = this.#options;
    if (!/^[0-9A-Za-z._-]+$/.test(name) || name.includes('..')) return undefined;
    try {
      if (remote && !(await readdir(dir).catch(() => [] as string[])).includes(name)) {
        await remote.download(name, join(dir, name));
      }
      const checkpoint = await readCheckpoint(join(dir, name), fingerprint);
      const { position } = checkpoint.manifest;
      return {
        generation: importGeneration(schema, checkpoint.generation),
        position: position === null ? null : this.#options.parsePosition(position),
      };
    } catch (error) {
      log.warn(
        { checkpoint: name, reason: error instanceof Error ? error.message : String(error) },
        'checkpoint not used',
      );
      return undefined;
    }
  }

  /** Starts the schedule. */
  start(): void {
    this.#timer = setInterval(() => {
      if (this.#due()) void this.write();
    }, CHECK_MS);
    this.#timer.unref();
  }

  #due(): boolean {
    const served = this.#options.controller.servedAt();
    if (!served || this.#writing || this.#closed) return false;
    if (this.#dueNow) return true;
    const last = this.#last;
    if (!last) return true;
    if (served.generation === last.generation && served.position?.serialize() === last.position)
      return false;
    const changes = this.#options.controller.changesApplied - last.changesApplied;
    return (
      changes >= this.#options.schedule.changes ||
      Date.now() - last.at >= this.#options.schedule.intervalMs
    );
  }

  /** Writes a checkpoint of the served generation now (after the one being written, if any). */
  write(): Promise<void> {
    const previous = this.#writing ?? Promise.resolve();
    const next = previous.then(() => this.#write());
    const writing = next.finally(() => {
      if (this.#writing === writing) this.#writing = null;
    });
    this.#writing = writing;
    return writing;
  }

  async #write(): Promise<void> {
    // Paced while queries are served; flat out before a planned stop.
    const pace = this.#closed ? {} : { bytesPerSecond: CHECKPOINT_WRITE_BYTES_PER_SECOND };
    const { controller, dir, fingerprint, log } = this.#options;
    const served = controller.servedAt();
    if (!served) return;
    const position = served.position?.serialize() ?? null;
    if (this.#last?.generation === served.generation && this.#last.position === position) {
      this.#dueNow = false;
      return;
    }
    this.#dueNow = false;
    const changesApplied = controller.changesApplied;
    const started = performance.now();
    try {
      const name = await writeCheckpoint(
        dir,
        exportGeneration(served.generation),
        { fingerprint, position },
        pace,
      );
      const ms = Math.round(performance.now() - started);
      const bytes = controller.bytesOf(served.generation);
      this.#last = {
        name,
        generation: served.generation,
        position,
        at: Date.now(),
        changesApplied,
        bytes,
        ms,
      };
      this.#written += 1;
      this.#lastError = null;
      log.info(
        { checkpoint: name, position: served.position?.toString(), ms },
        'checkpoint written',
      );
      await pruneCheckpoints(dir, KEEP);
      if (this.#options.remote) {
        await this.#options.remote.upload(join(dir, name), name);
        await this.#options.remote.prune(KEEP);
      }
      for (const listener of this.#writtenListeners) listener(served.generation.id, name);
      if (served.position)
        this.#keptPositions = [...this.#keptPositions, served.position].slice(-KEEP);
      // History back to the oldest checkpoint kept: falling back to it still finds its changes.
      const oldest = this.#keptPositions[0];
      if (oldest && this.#options.acknowledge) {
        await this.#options.acknowledge(oldest).catch((error: unknown) => {
          log.warn(
            { reason: error instanceof Error ? error.message : String(error) },
            'could not acknowledge the checkpoint position',
          );
        });
      }
    } catch (error) {
      this.#lastError = 'The last checkpoint could not be written.';
      log.error({ err: error }, 'checkpoint write failed');
    }
  }

  /**
   * Copies the newest remote checkpoints the folder lacks into it (a new node's folder is
   * empty). One that fails to come down is left out, and the start goes on with the rest.
   */
  async #bringDown(): Promise<void> {
    const { remote, dir, log } = this.#options;
    if (!remote) return;
    const local = new Set(await readdir(dir).catch(() => [] as string[]));
    let listed: string[];
    try {
      listed = await remote.list();
    } catch (error) {
      // The folder may still hold what this node wrote itself.
      log.warn(
        { reason: error instanceof Error ? error.message : String(error) },
        'checkpoints in the bucket unreachable; using the folder alone',
      );
      return;
    }
    const wanted = listed.slice(-KEEP).filter((name) => !local.has(name));
    for (const name of wanted) {
      try {
        await remote.download(name, join(dir, name));
      } catch (error) {
        await rm(join(dir, name), { recursive: true, force: true });
        log.warn(
          { checkpoint: name, reason: error instanceof Error ? error.message : String(error) },
          'checkpoint not brought down',
        );
      }
    }
  }

  /** Before a planned stop: waits for a write in progress, then checkpoints what is served. */
  async close(): Promise<void> {
    if (this.#timer) clearInterval(this.#timer);
    this.#timer = null;
    if (!this.#closed) {
      this.#closed = true;
      await this.write();
    }
  }

  /** `/health/detail`'s part: the checkpoint started from, and the writes since. */
  report(): Record<string, unknown> {
    const loaded = this.#loaded;
    const last = this.#last;
    return {
      checkpoint: loaded
        ? {
            name: loaded.name,
            position: loaded.manifest.position,
            written_at: loaded.manifest.writtenAt,
            age_ms: Date.now() - Date.parse(loaded.manifest.writtenAt),
          }
        : null,
      checkpoints: {
        written: this.#written,
        writing: this.#writing !== null,
        last: last
          ? {
              name: last.name,
              position: last.position,
              written_at: new Date(last.at).toISOString(),
              age_ms: Date.now() - last.at,
              ...(last.ms > 0 ? { write_ms: last.ms, snapshot_bytes: last.bytes } : {}),
            }
          : null,
        last_error: this.#lastError,
        interval_s: Math.round(this.#options.schedule.intervalMs / 1000),
        changes: this.#options.schedule.changes,
      },
    };
  }
}
