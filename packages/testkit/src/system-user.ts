import { readFileSync } from 'node:fs';
import process from 'node:process';

export interface RunAs {
  uid: number;
  gid: number;
}

/**
 * Database servers refuse to run as root. When we are root, run them as an unprivileged system
 * user (the first of `candidates` that exists); otherwise run them as ourselves.
 */
export function unprivilegedUser(candidates: string[]): RunAs | undefined {
  if (process.getuid?.() !== 0) return undefined;
  const passwd = readFileSync('/etc/passwd', 'utf8').split('\n');
  for (const name of [...candidates, 'nobody']) {
    const fields = passwd.find((line) => line.startsWith(`${name}:`))?.split(':');
    if (fields) return { uid: Number(fields[2]), gid: Number(fields[3]) };
  }
  throw new Error(
    `no unprivileged user (${candidates.join(', ')}, nobody) to run a database server`,
  );
}
