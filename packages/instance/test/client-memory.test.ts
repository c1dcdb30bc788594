import { describe, expect, it } from 'vitest';
import {
  CLIENT_MEMORY_KEY_MIN_BYTES,
  CLIENT_MEMORY_KEY_SHARE,
  ClientMemory,
} from '../src/http/client-memory.ts';

const MB = 1024 * 1024;

describe('ClientMemory', () => {
  it('counts held bytes per key and in all, as they are resized and released', () => {
    const memory = new ClientMemory(() => 400 * MB);
    const a = memory.hold('a', 10 * MB);
    const b = memory.hold('b', 3 * MB);
    const a2 = memory.hold('a');
    a2.set(5 * MB);
    expect(memory.bytesOf('a')).toBe(15 * MB);
    expect(memory.totalBytes).toBe(18 * MB);
    a.set(2 * MB);
    expect(a.bytes).toBe(2 * MB);
    expect(memory.bytesOf('a')).toBe(7 * MB);
    a.release();
    a.release();
    // A released handle stays released.
    a.set(50 * MB);
    expect(memory.bytesOf('a')).toBe(5 * MB);
    a2.release();
    b.release();
    expect(memory.totalBytes).toBe(0);
    expect(memory.bytesOf('a')).toBe(0);
  });

  it('refuses sizes that are not finite positive numbers by holding nothing', () => {
    const memory = new ClientMemory(() => 400 * MB);
    const held = memory.hold('a', Number.NaN);
    held.set(-5);
    held.set(Number.POSITIVE_INFINITY);
    expect(memory.totalBytes).toBe(0);
  });

  it('gives each key its share of the working memory, never less than one default answer', () => {
    const memory = new ClientMemory(() => 400 * MB);
    expect(memory.keyShareBytes()).toBe(400 * MB * CLIENT_MEMORY_KEY_SHARE);
    memory.hold('a', 99 * MB);
    expect(memory.keyHasRoom('a', 1 * MB)).toBe(true);
    expect(memory.keyHasRoom('a', 2 * MB)).toBe(false);
    expect(memory.keyHasRoom('b', 100 * MB)).toBe(true);
    const small = new ClientMemory(() => 0);
    expect(small.keyShareBytes()).toBe(CLIENT_MEMORY_KEY_MIN_BYTES);
  });
});
