import { type ChildProcess, spawn } from 'node:child_process';
import process from 'node:process';
import type { Readable } from 'node:stream';

export interface ContainerLaunch {
  readonly file: string;
  readonly args: readonly string[];
  readonly cwd: string;
  readonly env: Readonly<Record<string, string>>;
}

/** How a container's process ended: its exit code, or 128 + the signal that ended it. */
export interface ContainerExit {
  readonly exitCode: number;
  readonly signal?: string;
}

const SIGNAL_NUMBERS: Record<string, number> = { SIGKILL: 9, SIGTERM: 15, SIGINT: 2 };

/**
 * One container run as a local process in its own process group (so that signals reach what
 * it starts too), its output passed on line by line.
 */
export class ContainerProcess {
  readonly pid: number | undefined;
  readonly exited: Promise<ContainerExit>;
  readonly #child: ChildProcess;
  #done = false;

  constructor(launch: ContainerLaunch, onLine: (line: string) => void) {
    this.#child = spawn(launch.file, [...launch.args], {
      cwd: launch.cwd,
      env: { ...launch.env },
      detached: true,
      stdio: ['ignore', 'pipe', 'pipe'],
    });
    this.pid = this.#child.pid;
    const outputs = [this.#child.stdout, this.#child.stderr].map((stream) =>
      forwardLines(stream as Readable, onLine),
    );
    this.exited = new Promise((resolve) => {
      const finish = (exit: ContainerExit) => {
        this.#done = true;
        // The streams end after the exit event: wait for their last lines.
        void Promise.all(outputs).then(() => resolve(exit));
      };
      this.#child.once('error', (error) => {
        onLine(`the fake kubelet could not start ${launch.file}: ${error.message}`);
        finish({ exitCode: 128 });
      });
      this.#child.once('exit', (code, signal) =>
        finish(
          signal
            ? { exitCode: 128 + (SIGNAL_NUMBERS[signal] ?? 1), signal }
            : { exitCode: code ?? 1 },
        ),
      );
    });
  }

  get running(): boolean {
    return !this.#done;
  }

  /** Sends `signal` to the container's whole process group. */
  signal(signal: 'SIGTERM' | 'SIGKILL'): void {
    if (this.#done || this.pid === undefined) return;
    try {
      process.kill(-this.pid, signal);
    } catch {
      this.#child.kill(signal);
    }
  }
}

function forwardLines(stream: Readable, onLine: (line: string) => void): Promise<void> {
  return new Promise((resolve) => {
    let partial = '';
    stream.setEncoding('utf8');
    stream.on('data', (chunk: string) => {
      const lines = (partial + chunk).split('\n');
      partial = lines.pop() as string;
      for (const line of lines) onLine(line.replace(/\r$/, ''));
    });
    stream.on('close', () => {
      if (partial !== '') onLine(partial);
      resolve();
    });
  });
}
