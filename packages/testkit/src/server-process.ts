import type { Buffer } from 'node:buffer';
import { type ChildProcess, spawn } from 'node:child_process';
import { closeSync, openSync, readFileSync } from 'node:fs';
import { join } from 'node:path';
import { recordServerPid } from './run-dir.ts';
import type { RunAs } from './system-user.ts';

export interface SpawnOptions {
  /** The server's own folder: its log and pid files go here. */
  dir: string;
  runAs?: RunAs | undefined;
}

/** Runs a helper program to completion (initdb, mariadb-install-db), failing with its output. */
export function runToCompletion(
  command: string,
  args: string[],
  options: SpawnOptions,
): Promise<void> {
  return new Promise((resolve, reject) => {
    const child = spawn(command, args, {
      stdio: ['ignore', 'pipe', 'pipe'],
      uid: options.runAs?.uid,
      gid: options.runAs?.gid,
    });
    let output = '';
    child.stdout.on('data', (chunk: Buffer) => {
      output += chunk;
    });
    child.stderr.on('data', (chunk: Buffer) => {
      output += chunk;
    });
    child.on('error', reject);
    child.on('exit', (code) => {
      if (code === 0) resolve();
      else reject(new Error(`${command} exited with ${code}:\n${output.slice(-2000)}`));
    });
  });
}

/** A long-running database server child whose output goes to `<dir>/server.log`. */
export class ServerProcess {
  readonly #child: ChildProcess;
  readonly #logPath: string;
  #exited = false;
  readonly #exitPromise: Promise<void>;

  constructor(command: string, args: string[], options: SpawnOptions) {
    this.#logPath = join(options.dir, 'server.log');
    const log = openSync(this.#logPath, 'a');
    this.#child = spawn(command, args, {
      stdio: ['ignore', log, log],
      uid: options.runAs?.uid,
      gid: options.runAs?.gid,
    });
    closeSync(log);
    this.#exitPromise = new Promise((resolve) => {
      this.#child.once('exit', () => {
        this.#exited = true;
        resolve();
      });
      this.#child.once('error', () => {
        this.#exited = true;
        resolve();
      });
    });
    if (this.#child.pid) recordServerPid(options.dir, this.#child.pid);
  }

  get exited(): boolean {
    return this.#exited;
  }

  logTail(chars = 2000): string {
    try {
      return readFileSync(this.#logPath, 'utf8').slice(-chars);
    } catch {
      return '';
    }
  }

  /** Polls `probe` until it succeeds; fails early if the server exits. */
  async waitUntilReady(probe: () => Promise<void>, timeoutMs = 30_000): Promise<void> {
    const deadline = Date.now() + timeoutMs;
    let lastError: unknown;
    while (Date.now() < deadline) {
      if (this.#exited) throw new Error(`server exited during start-up:\n${this.logTail()}`);
      try {
        await probe();
        return;
      } catch (error) {
        lastError = error;
        await new Promise((resolve) => setTimeout(resolve, 50));
      }
    }
    throw new Error(
      `server not ready after ${timeoutMs} ms (${String(lastError)}):\n${this.logTail()}`,
    );
  }

  /** Asks the server to shut down, and kills it if it has not after `graceMs`. */
  async stop(graceMs = 10_000): Promise<void> {
    if (this.#exited) return;
    this.#child.kill('SIGTERM');
    const timer = setTimeout(() => this.killNow(), graceMs);
    await this.#exitPromise;
    clearTimeout(timer);
  }

  /** Synchronous last resort for exit and signal handlers. */
  killNow(): void {
    if (!this.#exited) this.#child.kill('SIGKILL');
  }
}
