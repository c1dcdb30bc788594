import type { CompiledSchema, Generation } from '@replix/engine';
import type { PublicationBoard } from './publication-board.ts';
import type { HealthStatus, ServedSnapshot, ServedState } from './served-state.ts';

/** What a thread learns of the instance beyond the served generation: from the controller. */
export interface InstanceStatus {
  health(): HealthStatus;
  /** The controller's `/health/detail` document (its `snapshot` is replaced by the served one). */
  detail(): Record<string, unknown>;
  startReload(): Promise<{ readonly done: Promise<void> }>;
}

/** In-flight bytes are written to the board at least this often, for the other threads. */
const IN_FLIGHT_REPORT_MS = 50;

/**
 * A thread's view of the served snapshot when the instance runs several query threads: the
 * generation the board names, from the generations this thread holds. Every thread, the main
 * one included, answers through one of these, so all of them switch at the board's flip.
 */
export class PublishedState implements ServedState {
  readonly schema: CompiledSchema;
  readonly bootId: string;
  readonly #board: PublicationBoard;
  readonly #thread: number;
  readonly #status: InstanceStatus;
  readonly #held = new Map<number, { generation: Generation; bytes: number }>();
  #inFlight: () => number = () => 0;
  #clientHeld: () => number = () => 0;
  #reporter: ReturnType<typeof setInterval> | undefined;

  constructor(
    schema: CompiledSchema,
    bootId: string,
    board: PublicationBoard,
    thread: number,
    status: InstanceStatus,
  ) {
    this.schema = schema;
    this.bootId = bootId;
    this.#board = board;
    this.#thread = thread;
    this.#status = status;
  }

  /** Keeps `generation` until the board has passed it; it may be published once held. */
  hold(generation: Generation, bytes: number): void {
    this.#held.set(generation.id, { generation, bytes });
  }

  /** A held generation by id (a restarted thread is sent the ones that may be served). */
  held(id: number): Generation | undefined {
    return this.#held.get(id)?.generation;
  }

  current(): ServedSnapshot | null {
    const { generationId, swapCount } = this.#board.served();
    const entry = this.#held.get(generationId);
    if (!entry) return null;
    if (this.#held.size > 1) {
      // The flip has passed older generations: queries in flight keep their own reference.
      for (const id of this.#held.keys()) if (id < generationId) this.#held.delete(id);
    }
    return {
      generation: entry.generation,
      swapCount,
      ageMs: Math.max(0, Date.now() - this.#board.lastSyncAt),
    };
  }

  health(): HealthStatus {
    const health = this.#status.health();
    // The status reaches a thread a moment after the flip: a served generation is loaded.
    return health === 'loading' && this.current() ? 'ok' : health;
  }

  detail(): Record<string, unknown> {
    const detail = this.#status.detail();
    const served = this.current();
    const entry = served ? this.#held.get(served.generation.id) : undefined;
    const memory = (detail.memory ?? {}) as Record<string, unknown>;
    return {
      ...detail,
      status: this.health(),
      snapshot:
        served && entry
          ? {
              generation: served.generation.id,
              swap_count: served.swapCount,
              age_ms: served.ageMs,
              bytes: entry.bytes,
              row_counts: served.generation.rowCounts(),
            }
          : detail.snapshot,
      memory: {
        ...memory,
        query_working_bytes: this.#reportInFlight() + this.#board.inFlightBytes(this.#thread),
        query_working_limit_bytes: this.#board.workingLimitBytes,
        client_held_bytes: this.#clientHeld() + this.#board.clientHeldBytes(this.#thread),
      },
    };
  }

  queryWorkingBytes(): number {
    this.#reportInFlight();
    return Math.max(0, this.#board.workingLimitBytes - this.#board.inFlightBytes(this.#thread));
  }

  countQueryMemory(inFlightBytes: () => number): void {
    this.#inFlight = inFlightBytes;
    clearInterval(this.#reporter);
    this.#reporter = setInterval(() => this.#reportInFlight(), IN_FLIGHT_REPORT_MS);
    this.#reporter.unref();
  }

  countClientMemory(heldBytes: () => number): void {
    this.#clientHeld = heldBytes;
  }

  /** Writes this thread's in-flight bytes (and bytes held for clients) to the board; returns them. */
  #reportInFlight(): number {
    const bytes = this.#inFlight();
    this.#board.setInFlightBytes(this.#thread, bytes);
    this.#board.setClientHeldBytes(this.#thread, this.#clientHeld());
    return bytes;
  }

  startReload(): Promise<{ readonly done: Promise<void> }> {
    return this.#status.startReload();
  }

  /** Stops reporting (the thread is closing). */
  stop(): void {
    clearInterval(this.#reporter);
  }
}
