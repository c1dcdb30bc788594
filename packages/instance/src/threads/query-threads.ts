import process from 'node:process';
import {
  isMainThread,
  parentPort,
  Worker,
  type WorkerOptions,
  workerData,
} from 'node:worker_threads';
import { exportGeneration, type Generation } from '@replix/engine';
import type { AllowedKeyIds } from '@replix/instance-protocol';
import type { Logger } from 'pino';
import { AggregatorRegistry, type Registry } from 'prom-client';
import { shareCompileCache } from '../compile-cache.ts';
import { InstanceError } from '../errors.ts';
import type { ApiKeyVerifier } from '../http/api-keys.ts';
import type { RateLimiter } from '../http/rate-limiter.ts';
import { queryThreadYoungMb } from '../snapshot/instance-memory.ts';
import type { SnapshotController } from '../snapshot/snapshot-controller.ts';
import type { ThreadMetrics } from './metrics.ts';
import { PublicationBoard } from './publication-board.ts';
import { PublishedState } from './published-state.ts';
import { runQueryThread, type ThreadMetricsJson } from './query-thread.ts';
import {
  type FromQueryThread,
  isQueryThreadData,
  QUERY_THREAD_MARK,
  type QueryThreadData,
  type ToQueryThread,
} from './query-thread-messages.ts';
import type { SyncControl } from './served-state.ts';

/**
 * Query threads (issue 17: every core serves queries). Design:
 *
 * - The main thread keeps the one `SnapshotController` and replication, and serves HTTP as
 *   thread 0. Threads 1..N-1 are workers running the same `buildInstanceServer` over a
 *   `PublishedState`; every thread listens on the same port with `reusePort`, so the kernel
 *   spreads connections over them. Not one acceptor handing requests over: Node cannot pass a
 *   socket to a worker thread, so an acceptor would parse and answer every request itself
 *   (Fastify's hooks, the key check, serialization: most of a PK lookup's time) and cap the
 *   instance at one thread's HTTP rate; `npm run bench:threads` compares the two on bare
 *   servers.
 * - Each generation the controller installs is exported (`exportGeneration`) to every worker;
 *   once all hold it, one atomic store on the `PublicationBoard` makes it the served one on
 *   every thread at once: `swap_count`, `meta.snapshot` and ETags agree across connections.
 * - Admission is per thread (its own event loop: 32 running, 256 waiting each); the working
 *   memory is the instance's: each thread's budget is the instance's less the other threads'
 *   in-flight bytes, and the memory cap counts all threads' in-flight bytes.
 * - `/metrics` on any thread gathers every thread's registry (`AggregatorRegistry`).
 * - Rate limits are the instance's: every thread counts a key in the same `SharedArrayBuffer`
 *   slot (`rate-limiter.ts`), given out here and sent with the key ids.
 * - A worker that dies is restarted (it is sent the served generation before it listens).
 */

/** How often the controller's health and detail are sent to the workers. */
const STATUS_PERIOD_MS = 250;
/** A worker that has not taken a generation by then is not waited for (it answers 503 until). */
const HOLD_TIMEOUT_MS = 10_000;
const RESTART_DELAY_MS = 200;

/** This module's own file: loaded in a worker marked as a query thread, it runs the thread. */
const THREAD_ENTRY = new URL(import.meta.url);

if (!isMainThread && parentPort && isQueryThreadData(workerData)) {
  const port = parentPort;
  runQueryThread(workerData, port).catch((error: unknown) => {
    // The main thread sees the exit and restarts the thread (or fails the start).
    process.stderr.write(`query thread ${workerData.thread} failed: ${String(error)}\n`);
    process.exit(1);
  });
}

export type QueryThreadSettings = Omit<
  QueryThreadData,
  typeof QUERY_THREAD_MARK | 'thread' | 'threads' | 'board' | 'bootId' | 'port' | 'rateLimits'
>;

export interface QueryThreadsOptions {
  /** Threads in all, the main one included; at least 2 (one thread needs none of this). */
  readonly threads: number;
  readonly controller: SnapshotController;
  readonly keys: ApiKeyVerifier;
  readonly sync: SyncControl & { readonly paused: boolean };
  readonly settings: QueryThreadSettings;
  readonly log: Logger;
  /** Per-key rate limits, counted in a buffer every thread shares; its key slots set already. */
  readonly rateLimiter?: RateLimiter | undefined;
  /** Makes each query thread's worker (`newQueryWorker` unless given: tests keep theirs to end one). */
  readonly newWorker?: NewQueryWorker | undefined;
}

/** Makes the worker of query thread `thread` (1 and up) from its entry script and options. */
export type NewQueryWorker = (thread: number, entry: URL, options: WorkerOptions) => Worker;

/** How a query thread's worker is made. */
export const newQueryWorker: NewQueryWorker = (_thread, entry, options) =>
  new Worker(entry, options);

interface WorkerSlot {
  readonly thread: number;
  readonly worker: Worker;
  /** Resolvers waiting for this worker to hold a generation, by id. */
  readonly holding: Map<number, () => void>;
  readonly listening: Promise<void>;
  readonly listened: () => void;
  readonly exited: Promise<number>;
}

export class QueryThreads {
  readonly board: PublicationBoard;
  /** The main thread's view: its server answers through this, like every worker's. */
  readonly state: PublishedState;
  /** Thread 0's metrics: the main thread gathers everyone's. */
  readonly metrics: ThreadMetrics;
  readonly #options: QueryThreadsOptions;
  readonly #slots: (WorkerSlot | undefined)[] = [];
  readonly #gathering = new Map<number, (json: ThreadMetricsJson) => void>();
  #nextGather = 1;
  #registry: Registry | undefined;
  #publishing: Promise<void> = Promise.resolve();
  #latest: Generation | undefined;
  /** The keys of now: a thread restarted after a key change starts with them. */
  #allowed: AllowedKeyIds;
  #port = 0;
  #closing = false;
  #restarts = 0;
  readonly #status: ReturnType<typeof setInterval>;

  constructor(options: QueryThreadsOptions) {
    this.#options = options;
    const { controller } = options;
    this.board = new PublicationBoard(options.threads);
    this.state = new PublishedState(controller.schema, controller.bootId, this.board, 0, {
      health: () => controller.health(),
      detail: () => controller.detail(),
      startReload: async () => {
        const { done } = await controller.startReload();
        return { done: done.then(() => this.published()) };
      },
    });
    controller.countQueryMemory(() => this.board.inFlightBytes());
    controller.countClientMemory(() => this.board.clientHeldBytes());
    controller.onInstall((generation) => this.#publish(generation));
    this.#allowed = { keyIds: options.settings.keyIds, adminKeyIds: options.settings.adminKeyIds };
    options.keys.onChange((allowed) => {
      this.#allowed = allowed;
      this.#broadcast({
        type: 'keys',
        keyIds: [...allowed.keyIds],
        adminKeyIds: [...allowed.adminKeyIds],
        rateLimitSlots: options.rateLimiter?.slots(),
      });
    });
    this.metrics = {
      thread: 0,
      attach: (registry) => {
        this.#registry = registry;
      },
      gather: () => this.#gatherMetrics(),
    };
    this.#status = setInterval(() => this.#sendStatus(), STATUS_PERIOD_MS);
    this.#status.unref();
  }

  /** Workers restarted after dying, since start. */
  get restarts(): number {
    return this.#restarts;
  }

  /** Starts the workers on `port` (the main thread's, already listening); resolves when all listen. */
  async start(port: number): Promise<void> {
    this.#port = port;
    shareCompileCache();
    for (let thread = 1; thread < this.#options.threads; thread++) this.#spawn(thread);
    const started = this.#slots.filter((slot) => slot !== undefined);
    await Promise.all(
      started.map((slot) =>
        Promise.race([
          slot.listening,
          slot.exited.then((code) => {
            throw new Error(`query thread ${slot.thread} stopped at start (exit code ${code})`);
          }),
        ]),
      ),
    );
  }

  /** Resolves once every generation installed so far has been published (or skipped). */
  published(): Promise<void> {
    return this.#publishing;
  }

  #spawn(thread: number): void {
    const { settings, controller } = this.#options;
    const data: QueryThreadData = {
      ...settings,
      [QUERY_THREAD_MARK]: true,
      thread,
      threads: this.#options.threads,
      board: this.board.buffers,
      bootId: controller.bootId,
      port: this.#port,
      keyIds: [...this.#allowed.keyIds],
      adminKeyIds: [...this.#allowed.adminKeyIds],
      rateLimits: this.#options.rateLimiter?.shared(),
    };
    const worker = (this.#options.newWorker ?? newQueryWorker)(thread, THREAD_ENTRY, {
      workerData: data,
      resourceLimits: { maxYoungGenerationSizeMb: queryThreadYoungMb() },
    });
    const holding = new Map<number, () => void>();
    let listened: () => void = () => {};
    const listening = new Promise<void>((resolve) => {
      listened = resolve;
    });
    const exited = new Promise<number>((resolve) => worker.once('exit', resolve));
    const slot: WorkerSlot = { thread, worker, holding, listening, listened, exited };
    this.#slots[thread] = slot;
    worker.on('message', (message: FromQueryThread) => this.#onMessage(slot, message));
    worker.on('error', (error) =>
      this.#options.log.error({ err: error, thread }, 'query thread failed'),
    );
    void exited.then((code) => {
      for (const resolve of holding.values()) resolve();
      if (this.#slots[thread] === slot) this.#slots[thread] = undefined;
      if (this.#closing) return;
      this.#options.log.error({ thread, code }, 'query thread stopped; restarting it');
      this.#restarts += 1;
      setTimeout(() => {
        if (!this.#closing) this.#spawn(thread);
      }, RESTART_DELAY_MS).unref();
    });
    // A thread that starts after the first snapshot takes the served and the newest generation.
    const served = this.state.held(this.board.served().generationId);
    for (const generation of new Set([served, this.#latest])) {
      if (generation) this.#post(slot, this.#generationMessage(generation));
    }
    this.#sendStatusTo(slot);
  }

  #generationMessage(generation: Generation): ToQueryThread {
    return {
      type: 'generation',
      shared: exportGeneration(generation),
      bytes: this.#options.controller.bytesOf(generation),
    };
  }

  #onMessage(slot: WorkerSlot, message: FromQueryThread): void {
    switch (message.type) {
      case 'listening':
        slot.listened();
        break;
      case 'held':
        slot.holding.get(message.id)?.();
        slot.holding.delete(message.id);
        break;
      case 'gathered':
        this.#gathering.get(message.id)?.(message.metrics as ThreadMetricsJson);
        this.#gathering.delete(message.id);
        break;
      case 'action':
        void this.#act(slot, message.id, message.action);
        break;
    }
  }

  async #act(slot: WorkerSlot, id: number, action: string): Promise<void> {
    const reply = (value: unknown, error: unknown = null) =>
      this.#post(slot, {
        type: 'reply',
        id,
        value,
        error:
          error === null
            ? null
            : error instanceof InstanceError
              ? { code: error.code, message: error.message }
              : { code: 'internal', message: 'reload failed' },
      });
    try {
      if (action === 'reload') {
        const { done } = await this.state.startReload();
        reply(true);
        done.then(
          () => this.#post(slot, { type: 'reply', id: id + 1, value: true }),
          () =>
            this.#post(slot, {
              type: 'reply',
              id: id + 1,
              error: { code: 'internal', message: 'reload failed' },
            }),
        );
      } else if (action === 'pause' || action === 'resume') {
        await (action === 'pause' ? this.#options.sync.pause() : this.#options.sync.resume());
        this.#sendStatus();
        reply(true);
      } else if (action === 'metrics') {
        reply(await this.#gatherMetrics());
      }
    } catch (error) {
      reply(null, error);
    }
  }

  /** Every thread's metrics as one exposition: counters summed, snapshot gauges the first's. */
  async #gatherMetrics(): Promise<string> {
    const own = (await this.#registry?.getMetricsAsJSON()) ?? [];
    const others = await Promise.all(
      this.#workers().map(
        (slot) =>
          new Promise<ThreadMetricsJson>((resolve) => {
            const id = this.#nextGather++;
            this.#gathering.set(id, resolve);
            this.#post(slot, { type: 'gather', id });
            void slot.exited.then(() => resolve([]));
          }),
      ),
    );
    return AggregatorRegistry.aggregate([own, ...others]).metrics();
  }

  #workers(): WorkerSlot[] {
    return this.#slots.filter((slot) => slot !== undefined);
  }

  #post(slot: WorkerSlot, message: ToQueryThread): void {
    slot.worker.postMessage(message);
  }

  #broadcast(message: ToQueryThread): void {
    for (const slot of this.#workers()) this.#post(slot, message);
  }

  /**
   * Called as the controller installs a generation: every thread takes it, then one store
   * flips them all. Publications run in order; one overtaken by a newer generation is skipped.
   */
  #publish(generation: Generation): void {
    const { controller } = this.#options;
    const swapCount = controller.swapCount;
    this.state.hold(generation, controller.bytesOf(generation));
    this.#latest = generation;
    this.#publishing = this.#publishing.then(async () => {
      if (this.#latest !== generation) return;
      const message = this.#generationMessage(generation);
      await Promise.all(
        this.#workers().map((slot) => {
          const held = new Promise<void>((resolve) => {
            slot.holding.set(generation.id, resolve);
            setTimeout(resolve, HOLD_TIMEOUT_MS).unref();
          });
          this.#post(slot, message);
          return held;
        }),
      );
      this.#sendFigures();
      this.board.publish(generation.id, swapCount);
      this.#sendStatus();
    });
  }

  #sendFigures(): void {
    const { controller } = this.#options;
    this.board.lastSyncAt = controller.lastSyncAt;
    this.board.workingLimitBytes = controller.queryWorkingBytes();
  }

  #statusMessage(): ToQueryThread {
    const { controller } = this.#options;
    // Through JSON: the detail is sent as JSON anyway, and the clone must not meet a class.
    const detail = JSON.parse(JSON.stringify(controller.detail())) as Record<string, unknown>;
    return { type: 'status', health: controller.health(), detail };
  }

  #sendStatusTo(slot: WorkerSlot): void {
    this.#post(slot, this.#statusMessage());
  }

  #sendStatus(): void {
    this.#sendFigures();
    // Lets an idle main thread drop generations the flip has passed.
    this.state.current();
    if (this.#workers().length > 0) this.#broadcast(this.#statusMessage());
  }

  /** Every worker stops accepting and drains its requests in flight (at most `drainMs`). */
  async close(drainMs: number): Promise<void> {
    this.#closing = true;
    clearInterval(this.#status);
    this.state.stop();
    const slots = this.#workers();
    this.#broadcast({ type: 'close', drainMs });
    await Promise.all(
      slots.map(async (slot) => {
        const stop = setTimeout(() => void slot.worker.terminate(), drainMs + 1000);
        await slot.exited;
        clearTimeout(stop);
      }),
    );
  }
}
