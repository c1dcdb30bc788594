import { getHeapStatistics } from 'node:v8';

const MiB = 1024 * 1024;
/** Share of the memory limit kept back from queries: schema, caches, request and reply buffers. */
export const WORKING_MEMORY_HEADROOM_SHARE = 0.1;
/** The least kept back, for small instances. */
export const MIN_HEADROOM_BYTES = 32 * MiB;

export interface MemoryLimits {
  /** V8's `heap_size_limit`: old space plus young generation (`heapFlags` sets it). */
  readonly heapLimitBytes: number;
  /** The snapshot memory cap (`memory_cap_mb`, `REPLIX_MEMORY_CAP_MB`), or null for none. */
  readonly memoryCapBytes: number | null;
}

/** This process's heap limit. */
export function processHeapLimitBytes(): number {
  return getHeapStatistics().heap_size_limit;
}

/**
 * The bytes queries may hold together right now: the smaller of the heap limit and the memory
 * cap, less the snapshot (served, and any generation waiting to be swapped in), less headroom
 * (10% of the limit, at least 32 MiB). Zero when the snapshot leaves nothing: queries then run
 * one at a time (`QueryAdmission` lets a lone query run whatever its size).
 */
export function queryWorkingMemoryBytes(limits: MemoryLimits, snapshotBytes: number): number {
  const limit = Math.min(limits.heapLimitBytes, limits.memoryCapBytes ?? Number.POSITIVE_INFINITY);
  const headroom = Math.max(MIN_HEADROOM_BYTES, limit * WORKING_MEMORY_HEADROOM_SHARE);
  return Math.max(0, Math.floor(limit - snapshotBytes - headroom));
}
