import { closeSync, mkdirSync, openSync, readFileSync, rmSync, writeSync } from 'node:fs';
import { join } from 'node:path';
import process from 'node:process';

export class DataFolderLockedError extends Error {
  constructor(folder: string, pid: number) {
    super(
      `The data folder ${folder} is in use by another Replix process (pid ${pid}). Stop it first, or set REPLIX_DATA_DIR to another folder.`,
    );
    this.name = 'DataFolderLockedError';
  }
}

/**
 * Whether anything holds `pid`: signal 0 reaches it, or it belongs to another user (EPERM). A
 * zombie counts, unlike `processRuns` in drivers/process-identity.ts: the lock is taken over
 * only once the pid is gone.
 */
function pidExists(pid: number): boolean {
  try {
    process.kill(pid, 0);
    return true;
  } catch (error) {
    return (error as NodeJS.ErrnoException).code === 'EPERM';
  }
}

/**
 * Takes the data folder for this process. PGlite is single-process: a second process opening
 * the same folder would corrupt it, so the folder holds a lock file naming its owner's pid. A
 * lock whose owner is gone (a killed process) is taken over.
 */
export function lockDataFolder(folder: string): () => void {
  mkdirSync(folder, { recursive: true });
  const lockPath = join(folder, 'replix.lock');
  for (let attempt = 0; attempt < 2; attempt++) {
    try {
      const fd = openSync(lockPath, 'wx', 0o600);
      writeSync(fd, String(process.pid));
      closeSync(fd);
      return () => rmSync(lockPath, { force: true });
    } catch (error) {
      if ((error as NodeJS.ErrnoException).code !== 'EEXIST') throw error;
      const owner = Number(readFileSync(lockPath, 'utf8'));
      if (Number.isInteger(owner) && owner > 0 && owner !== process.pid && pidExists(owner)) {
        throw new DataFolderLockedError(folder, owner);
      }
      rmSync(lockPath, { force: true });
    }
  }
  throw new Error(`Cannot lock the data folder ${folder}.`);
}
