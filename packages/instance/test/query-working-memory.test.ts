import { describe, expect, it } from 'vitest';
import {
  processHeapLimitBytes,
  queryWorkingMemoryBytes,
} from '../src/threads/query-working-memory.ts';

const MiB = 1024 * 1024;

describe('queryWorkingMemoryBytes', () => {
  it('is the heap limit less the snapshot and 10% headroom', () => {
    const limits = { heapLimitBytes: 1000 * MiB, memoryCapBytes: null };
    expect(queryWorkingMemoryBytes(limits, 300 * MiB)).toBe(600 * MiB);
  });

  it('takes the smaller of the heap limit and the memory cap', () => {
    const limits = { heapLimitBytes: 1000 * MiB, memoryCapBytes: 500 * MiB };
    expect(queryWorkingMemoryBytes(limits, 100 * MiB)).toBe(500 * MiB - 100 * MiB - 50 * MiB);
  });

  it('keeps at least 32 MiB back on a small instance', () => {
    const limits = { heapLimitBytes: 200 * MiB, memoryCapBytes: null };
    expect(queryWorkingMemoryBytes(limits, 100 * MiB)).toBe(68 * MiB);
  });

  it('is zero, never negative, when the snapshot takes everything', () => {
    const limits = { heapLimitBytes: 384 * MiB, memoryCapBytes: 512 * MiB };
    expect(queryWorkingMemoryBytes(limits, 380 * MiB)).toBe(0);
  });

  it('reads this process heap limit from V8', () => {
    expect(processHeapLimitBytes()).toBeGreaterThan(0);
  });
});
