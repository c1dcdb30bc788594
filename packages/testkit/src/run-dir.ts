import {
  chmodSync,
  existsSync,
  mkdtempSync,
  readdirSync,
  readFileSync,
  rmSync,
  statSync,
  writeFileSync,
} from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import process from 'node:process';

const PREFIX = 'replix-test-';
/** A run folder's name: the prefix and the six characters `mkdtemp` adds (nothing else is swept). */
const RUN_DIR_NAME = /^replix-test-[A-Za-z0-9]{6}$/;
const OWNER_FILE = 'owner.pid';
const SERVER_PID_FILE = 'server.pid';
/** How long a run folder may lack its owner file before a sweep takes it for stale. */
const OWNERLESS_GRACE_MS = 60_000;

function isAlive(pid: number): boolean {
  try {
    process.kill(pid, 0);
    return true;
  } catch (error) {
    return (error as NodeJS.ErrnoException).code === 'EPERM';
  }
}

function commandLineOf(pid: number): string {
  try {
    return readFileSync(`/proc/${pid}/cmdline`, 'utf8');
  } catch {
    return '';
  }
}

/** Kills a server recorded in `dir` if it still runs and still is the program we started there. */
export function killRecordedServer(dir: string): void {
  const pidFile = join(dir, SERVER_PID_FILE);
  if (!existsSync(pidFile)) return;
  const pid = Number(readFileSync(pidFile, 'utf8'));
  // A recycled pid belongs to some other program: only kill one whose command line names `dir`.
  if (pid > 0 && commandLineOf(pid).includes(dir)) {
    try {
      process.kill(pid, 'SIGKILL');
    } catch {
      // already gone
    }
  }
}

export function recordServerPid(dir: string, pid: number): void {
  writeFileSync(join(dir, SERVER_PID_FILE), String(pid));
}

/**
 * Removes run folders whose owning process died without cleaning up (SIGKILL, a crash), killing
 * any server still running from them, so no run leaves servers or folders behind for long.
 */
export function sweepStaleRunDirs(root = tmpdir()): void {
  for (const name of readdirSync(root)) {
    if (!RUN_DIR_NAME.test(name)) continue;
    const dir = join(root, name);
    try {
      const ownerFile = join(dir, OWNER_FILE);
      const owner = existsSync(ownerFile) ? Number(readFileSync(ownerFile, 'utf8')) : 0;
      if (owner > 0 && isAlive(owner)) continue;
      // A folder another run made a moment ago has no owner file yet: not stale.
      if (owner === 0 && Date.now() - statSync(dir).mtimeMs < OWNERLESS_GRACE_MS) continue;
      for (const server of readdirSync(dir, { withFileTypes: true })) {
        if (server.isDirectory()) killRecordedServer(join(dir, server.name));
      }
      rmSync(dir, { recursive: true, force: true });
    } catch (error) {
      // Another run swept or removed it meanwhile.
      if ((error as NodeJS.ErrnoException).code !== 'ENOENT') throw error;
    }
  }
}

/** A fresh folder for one test run's servers, readable by the servers' unprivileged users. */
export function createRunDir(): string {
  sweepStaleRunDirs();
  const dir = mkdtempSync(join(tmpdir(), PREFIX));
  chmodSync(dir, 0o755);
  writeFileSync(join(dir, OWNER_FILE), String(process.pid));
  return dir;
}

export function removeRunDir(dir: string): void {
  rmSync(dir, { recursive: true, force: true });
}
