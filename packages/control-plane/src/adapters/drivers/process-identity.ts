import { readdirSync, readFileSync, readlinkSync } from 'node:fs';

/**
 * Whether `pid` is a live process whose working directory is `folder`. The process driver
 * starts every instance in its own folder, so this tells our instance apart from an unrelated
 * process that reuses a recorded pid after a reboot or a long downtime. A zombie (exited, not
 * yet reaped by whoever adopted it) counts as dead.
 */
export function processRunsIn(pid: number, folder: string): boolean {
  if (!Number.isInteger(pid) || pid <= 0) return false;
  try {
    if (readlinkSync(`/proc/${pid}/cwd`) !== folder) return false;
  } catch {
    return false;
  }
  return processRuns(pid);
}

/**
 * Whether `pid` is a running process, whatever it runs: a zombie is not. (`pidExists` in
 * data-folder-lock.ts is the looser check: anything that still holds the pid.)
 */
export function processRuns(pid: number): boolean {
  if (!Number.isInteger(pid) || pid <= 0) return false;
  try {
    // The state follows the command name, which is in parentheses and may hold spaces.
    const stat = readFileSync(`/proc/${pid}/stat`, 'utf8');
    const state = stat.slice(stat.lastIndexOf(')') + 2, stat.lastIndexOf(')') + 3);
    return state !== 'Z' && state !== 'X';
  } catch {
    return false;
  }
}

/** The pids of live processes whose working directory is inside `root` (strays, tests). */
export function processesUnder(root: string): number[] {
  const found: number[] = [];
  let entries: string[];
  try {
    entries = readdirSync('/proc');
  } catch {
    return found;
  }
  for (const entry of entries) {
    if (!/^\d+$/.test(entry)) continue;
    const pid = Number(entry);
    try {
      const cwd = readlinkSync(`/proc/${pid}/cwd`);
      if ((cwd === root || cwd.startsWith(`${root}/`)) && processRunsIn(pid, cwd)) found.push(pid);
    } catch {}
  }
  return found;
}
