import { renameSync, writeFileSync } from 'node:fs';
import process from 'node:process';

/** Writes a file whole or not at all (a temporary file, then a rename): readers never see half of it. */
export function writeFileAtomically(path: string, text: string, mode = 0o600): void {
  const temporary = `${path}.${process.pid}.tmp`;
  writeFileSync(temporary, text, { mode });
  renameSync(temporary, path);
}
