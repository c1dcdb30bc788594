import process from 'node:process';
import { ConfigError } from '@replix/runtime';

/**
 * The share of an instance's memory given to V8's heap (old space plus young generation). The
 * rest is for what lives outside it: the snapshot's typed arrays, answers waiting to be sent
 * (Buffers) and socket buffers, compiled code, stacks, the allocator's slack. Measured under
 * the hostile-query fuzzer, an xs instance peaked at 496 MB with 75%: 70% leaves a margin.
 */
export const HEAP_SHARE = 0.7;
/** The smallest memory size an instance runs in. */
export const MIN_MEMORY_MB = 128;

/**
 * V8 sizes each of the young generation's three semi-spaces at 64 MB by default (192 MB in all,
 * more than a third of an `xs` instance): scale them with the instance, 1/64 of its memory,
 * 1 to 32 MB.
 */
function semiSpaceMb(memoryMb: number): number {
  return Math.min(32, Math.max(1, Math.floor(memoryMb / 64)));
}

/**
 * The Node.js flags that bound an instance's heap to `HEAP_SHARE` of `memoryMb`:
 * `--max-semi-space-size` (see `semiSpaceMb`) and `--max-old-space-size` for the rest, so
 * `v8.getHeapStatistics().heap_size_limit` ends near 70% of the size (358 MB for 512 MB).
 */
export function heapFlags(memoryMb: number): string[] {
  const semi = semiSpaceMb(memoryMb);
  const oldSpace = Math.max(16, Math.floor(memoryMb * HEAP_SHARE) - 3 * semi);
  return [`--max-old-space-size=${oldSpace}`, `--max-semi-space-size=${semi}`];
}

/**
 * The environment an instance process is started with for its memory: glibc's malloc asks for
 * transparent huge pages (`madvise(MADV_HUGEPAGE)`) on the large blocks it maps. Node allocates
 * the backing stores of ArrayBuffers and SharedArrayBuffers with malloc, so the snapshot's
 * column arrays and key tables sit on 2 MiB pages instead of 4 KiB ones, and a row read
 * anywhere in a large table misses the TLB far less: PK lookups and embeds of random ids over
 * 1M rows take about 10% less engine time (`bench:lookup`), and a lookup after the thread slept
 * about 0.5 µs less. glibc reads its tunables only when a process starts, so whoever starts the
 * instance sets it (`launchEnvironment` for both drivers); a C library without the tunable
 * (musl, glibc before 2.35) or a kernel with transparent huge pages off ignores it.
 */
export const INSTANCE_MALLOC_ENVIRONMENT: Readonly<Record<string, string>> = {
  GLIBC_TUNABLES: 'glibc.malloc.hugetlb=1',
};

/** True when Node was started with a bound on its old space already (by a driver or a user). */
export function heapIsBounded(execArgv: readonly string[]): boolean {
  return execArgv.some((arg) => arg.startsWith('--max-old-space-size'));
}

/**
 * The memory size `replix serve` runs in: `--memory-mb` or else `REPLIX_MEMORY_MB`, a whole
 * number of MB of at least `MIN_MEMORY_MB`; undefined when neither is given (an unbounded heap).
 */
export function memorySizeMb(
  flag: string | number | undefined,
  env: NodeJS.ProcessEnv = process.env,
): number | undefined {
  const given = flag ?? (env.REPLIX_MEMORY_MB || undefined);
  if (given === undefined) return undefined;
  const value = Number(given);
  if (!Number.isInteger(value) || value < MIN_MEMORY_MB) {
    throw new ConfigError(
      `--memory-mb (or REPLIX_MEMORY_MB) must be a whole number of MB of at least ${MIN_MEMORY_MB}, not "${given}".`,
    );
  }
  return value;
}
