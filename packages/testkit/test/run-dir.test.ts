import { spawn } from 'node:child_process';
import { existsSync, mkdirSync, mkdtempSync, utimesSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { describe, expect, it } from 'vitest';
import { sweepStaleRunDirs } from '../src/run-dir.ts';

function exited(child: ReturnType<typeof spawn>): Promise<NodeJS.Signals | null> {
  return new Promise((resolve) => child.once('exit', (_code, signal) => resolve(signal)));
}

describe('sweepStaleRunDirs', () => {
  it('kills the servers of a run whose owner died and removes its folder', async () => {
    const root = mkdtempSync(join(tmpdir(), 'sweep-'));
    const runDir = join(root, 'replix-test-dead00');
    const serverDir = join(runDir, 'mariadb');
    mkdirSync(serverDir, { recursive: true });
    // A stand-in server whose command line names its folder, as a real one does.
    const server = spawn('sh', ['-c', 'sleep 300', serverDir], { stdio: 'ignore' });
    const signal = exited(server);
    writeFileSync(join(serverDir, 'server.pid'), String(server.pid));
    writeFileSync(join(runDir, 'owner.pid'), '999999999');

    sweepStaleRunDirs(root);

    expect(await signal).toBe('SIGKILL');
    expect(existsSync(runDir)).toBe(false);
  });

  it('leaves a run alone while its owner lives', () => {
    const root = mkdtempSync(join(tmpdir(), 'sweep-'));
    const runDir = join(root, 'replix-test-live00');
    mkdirSync(runDir);
    writeFileSync(join(runDir, 'owner.pid'), String(process.pid));

    sweepStaleRunDirs(root);

    expect(existsSync(runDir)).toBe(true);
  });

  it('leaves alone a folder that only shares the prefix (a cache other processes write to)', () => {
    const root = mkdtempSync(join(tmpdir(), 'sweep-'));
    const other = join(root, 'replix-test-compile-cache');
    mkdirSync(other);
    // Ownerless and older than any grace: a run folder like it would be swept.
    const long = new Date(Date.now() - 3_600_000);
    utimesSync(other, long, long);

    sweepStaleRunDirs(root);

    expect(existsSync(other)).toBe(true);
  });
});
