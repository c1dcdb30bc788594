import { hostname } from 'node:os';
import process from 'node:process';
import { processRuns } from '../drivers/process-identity.ts';

/**
 * Lease owners are `<host>:<pid>:<8 hex>[:<role>]` (the process id of start-control-plane.ts),
 * so a process can tell a lease held by a dead process of its own machine.
 */
const OWNER_PATTERN = /^(.+):(\d+):[0-9a-f]{8}(?::[a-z-]+)?$/;

function localPidOf(owner: string): number | null {
  const match = OWNER_PATTERN.exec(owner);
  if (!match || match[1] !== hostname()) return null;
  return Number(match[2]);
}

/** Whether a lease owner is a control-plane process of this machine that is gone (killed). */
export function ownerIsGoneLocally(owner: string): boolean {
  const pid = localPidOf(owner);
  return pid !== null && pid !== process.pid && !processRuns(pid);
}
