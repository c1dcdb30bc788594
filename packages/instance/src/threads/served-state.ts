import type { CompiledSchema, Generation } from '@replix/engine';

/** `ok`, `degraded` and `cap_exceeded` are health values; the others are phases. */
export type HealthStatus = 'loading' | 'ok' | 'degraded' | 'cap_exceeded' | 'failed';

export interface ServedSnapshot {
  readonly generation: Generation;
  readonly swapCount: number;
  readonly ageMs: number;
}

/**
 * What the HTTP server needs of the snapshot: the generation to answer from, health and its
 * detail, the working memory queries may hold, and a reload. The snapshot controller is one
 * (one thread); with query threads every thread serves through a published view of it
 * (`published-state.ts`), so each thread runs the same `buildInstanceServer` over it.
 */
export interface ServedState {
  readonly schema: CompiledSchema;
  readonly bootId: string;
  current(): ServedSnapshot | null;
  health(): HealthStatus;
  /** The status document of `/health/detail` (and of 503 answers while loading). */
  detail(): Record<string, unknown>;
  /** The working memory this thread's queries may hold now (`QueryAdmission`'s budget). */
  queryWorkingBytes(): number;
  /** This thread's admission gate reports the working memory of its running queries here. */
  countQueryMemory(inFlightBytes: () => number): void;
  /**
   * This thread reports the bytes it holds for clients here (already part of its in-flight
   * bytes): `/health/detail` shows them as `memory.client_held_bytes`.
   */
  countClientMemory(heldBytes: () => number): void;
  /**
   * `POST /reload`: rejects at once with `reload_busy` or `cap_degraded` (an `InstanceError`);
   * otherwise resolves when the reload started, with `done` settling when it is swapped in.
   */
  startReload(): Promise<{ readonly done: Promise<void> }>;
}

/** Replication pause and resume, from `POST /replication/pause|resume`. */
export interface SyncControl {
  pause(): void | Promise<void>;
  resume(): void | Promise<void>;
  readonly paused?: boolean;
}
