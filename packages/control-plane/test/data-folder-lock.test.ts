import { spawn } from 'node:child_process';
import { existsSync, mkdtempSync, readFileSync, rmSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { afterEach, describe, expect, it } from 'vitest';
import { DataFolderLockedError, lockDataFolder } from '../src/adapters/store/data-folder-lock.ts';

const folders: string[] = [];
afterEach(() => {
  for (const folder of folders.splice(0)) rmSync(folder, { recursive: true, force: true });
});

function folder(): string {
  const path = mkdtempSync(join(tmpdir(), 'replix-lock-'));
  folders.push(path);
  return path;
}

/** A pid that certainly belongs to no running process: a child that has exited. */
async function deadPid(): Promise<number> {
  const child = spawn(process.execPath, ['-e', '']);
  await new Promise((resolve) => child.once('exit', resolve));
  return child.pid as number;
}

describe('the data folder lock', () => {
  it('names its owner and is released on unlock', () => {
    const dir = folder();
    const unlock = lockDataFolder(dir);
    expect(readFileSync(join(dir, 'replix.lock'), 'utf8')).toBe(String(process.pid));
    unlock();
    expect(existsSync(join(dir, 'replix.lock'))).toBe(false);
  });

  it('refuses a folder another live process holds, naming its pid', () => {
    const dir = folder();
    // pid 1 is always alive: another process owns the folder.
    writeFileSync(join(dir, 'replix.lock'), '1');
    expect(() => lockDataFolder(dir)).toThrow(DataFolderLockedError);
    expect(() => lockDataFolder(dir)).toThrow(/pid 1\b/);
  });

  it('takes over a lock left by a process that was killed', async () => {
    const dir = folder();
    writeFileSync(join(dir, 'replix.lock'), String(await deadPid()));
    const unlock = lockDataFolder(dir);
    expect(readFileSync(join(dir, 'replix.lock'), 'utf8')).toBe(String(process.pid));
    unlock();
  });
});
