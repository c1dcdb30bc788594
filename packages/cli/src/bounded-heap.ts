import { spawn } from 'node:child_process';
import process from 'node:process';
import { heapFlags, heapIsBounded } from '@replix/instance-protocol';

const FORWARDED_SIGNALS: readonly NodeJS.Signals[] = ['SIGINT', 'SIGTERM', 'SIGHUP'];

/**
 * Runs this same command again in a child Node whose heap is bounded to `memoryMb`
 * (`heapFlags`: 70% of it), unless no size is given or this process's heap is bounded already.
 * V8 sizes its heap when it starts, so a running process cannot take the flags. The child
 * shares stdin, stdout and stderr (the ready line is its own); the signals that stop `serve`
 * are passed on to it. Resolves with the child's exit code; null means: go on in this process.
 */
export function runInBoundedHeap(memoryMb: number | undefined): Promise<number> | null {
  if (memoryMb === undefined || heapIsBounded(process.execArgv)) return null;
  const args = [...heapFlags(memoryMb), ...process.execArgv, ...process.argv.slice(1)];
  const child = spawn(process.execPath, args, { stdio: 'inherit' });
  const forward = (signal: NodeJS.Signals) => child.kill(signal);
  for (const signal of FORWARDED_SIGNALS) process.on(signal, forward);
  return new Promise((resolve) => {
    const done = (code: number) => {
      for (const signal of FORWARDED_SIGNALS) process.off(signal, forward);
      resolve(code);
    };
    child.once('error', () => done(1));
    child.once('exit', (code) => done(code ?? 1));
  });
}
