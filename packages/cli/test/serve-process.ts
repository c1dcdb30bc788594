import { spawn } from 'node:child_process';
import { readFileSync } from 'node:fs';
import { createInterface } from 'node:readline';
import { fileURLToPath } from 'node:url';

export const REPLIX_BIN = fileURLToPath(new URL('../bin/replix.js', import.meta.url));

/** A running `replix serve` process, once it has printed its ready line. */
export interface ServeProcess {
  readonly ready: Record<string, string>;
  /** What it wrote on stderr so far. */
  stderr(): string;
  /** Resident memory of the process (without `--memory-mb`, the instance itself). */
  residentBytes(): number;
  /** SIGTERM, then its exit code. */
  stop(): Promise<number | null>;
  /** SIGKILL, as a crash would end it; resolves once it is gone. */
  kill(): Promise<void>;
}

/** Runs `replix serve ...args` and waits for its ready line; rejects with stderr if it exits. */
export async function serveProcess(
  args: string[],
  env: NodeJS.ProcessEnv = process.env,
): Promise<ServeProcess> {
  const child = spawn(process.execPath, [REPLIX_BIN, 'serve', ...args], {
    stdio: ['ignore', 'pipe', 'pipe'],
    env,
  });
  let stderr = '';
  child.stderr.on('data', (chunk: Buffer) => {
    stderr += chunk;
  });
  const exited = new Promise<number | null>((resolve) =>
    child.once('exit', (code) => resolve(code)),
  );
  const ready = await new Promise<Record<string, string>>((resolve, reject) => {
    createInterface({ input: child.stdout }).once('line', (line) => resolve(JSON.parse(line)));
    exited.then((code) => reject(new Error(`serve exited ${code}: ${stderr}`)));
  });
  return {
    ready,
    stderr: () => stderr,
    residentBytes() {
      const status = readFileSync(`/proc/${child.pid}/status`, 'utf8');
      return Number(/VmRSS:\s+(\d+) kB/.exec(status)?.[1]) * 1024;
    },
    stop() {
      child.kill('SIGTERM');
      return exited;
    },
    async kill() {
      if (child.exitCode === null && child.signalCode === null) child.kill('SIGKILL');
      await exited;
    },
  };
}
