import { mkdtemp, readdir, readFile, readlink, rm } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { afterEach, beforeEach, describe, expect, it } from 'vitest';
import { writeSecretVolume } from '../src/kubernetes/secret-volume.ts';

let dir: string;
beforeEach(async () => {
  dir = await mkdtemp(join(tmpdir(), 'secret-volume-'));
});
afterEach(async () => {
  await rm(dir, { recursive: true, force: true });
});

describe('writeSecretVolume', () => {
  it('shows the keys as files through the ..data symlink, and removes keys that went', async () => {
    await writeSecretVolume(
      dir,
      new Map([
        ['a', Buffer.from('1')],
        ['b', Buffer.from('2')],
      ]),
      0o644,
    );
    expect(await readFile(join(dir, 'a'), 'utf8')).toBe('1');
    expect(await readlink(join(dir, 'a'))).toBe(join('..data', 'a'));
    await writeSecretVolume(dir, new Map([['a', Buffer.from('3')]]), 0o644);
    expect(await readFile(join(dir, 'a'), 'utf8')).toBe('3');
    const entries = await readdir(dir);
    expect(entries.filter((entry) => !entry.startsWith('..'))).toEqual(['a']);
    // One version folder, the one ..data points at.
    const versions = entries.filter((entry) => entry.startsWith('..') && entry !== '..data');
    expect(versions).toEqual([await readlink(join(dir, '..data'))]);
  });

  it('never lets a reader see a half-written file while it is rewritten', async () => {
    const big = (fill: string) => Buffer.from(fill.repeat(256 * 1024));
    await writeSecretVolume(dir, new Map([['keys.json', big('a')]]), 0o644);
    let writing = true;
    const seen = new Set<string>();
    const reader = (async () => {
      while (writing) {
        const text = await readFile(join(dir, 'keys.json'), 'utf8').catch(() => 'missing');
        seen.add(text === 'missing' ? text : `${text[0]}x${text.length}:${new Set(text).size}`);
      }
    })();
    for (let i = 0; i < 20; i++) {
      await writeSecretVolume(dir, new Map([['keys.json', big(i % 2 === 0 ? 'b' : 'a')]]), 0o644);
    }
    writing = false;
    await reader;
    expect([...seen].every((entry) => /^[ab]x262144:1$/.test(entry))).toBe(true);
  });
});
