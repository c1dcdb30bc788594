import { type ChildProcess, spawn } from 'node:child_process';
import { createInterface } from 'node:readline';

export interface ChildServer {
  url: string;
  /** The child's process id (for its resident memory, say). */
  pid: number;
  /** The whole parsed ready line: `{ event: 'ready', url, … }` plus whatever the child added. */
  ready: Record<string, unknown>;
  stop(): Promise<void>;
}

export interface ChildServerOptions {
  /** How long to wait for the ready line; 60 s by default (a snapshot load can be slow). */
  readyTimeoutMs?: number;
  /** How long `stop()` waits after SIGTERM before SIGKILL; 5 s by default. */
  stopTimeoutMs?: number;
}

/** Output kept for diagnostics: enough to show a stack trace, bounded for long runs. */
const KEEP_CHARS = 16_384;

function keepTail(text: string, more: string): string {
  const joined = text + more;
  return joined.length > KEEP_CHARS ? joined.slice(-KEEP_CHARS) : joined;
}

function isReadyLine(value: unknown): value is Record<string, unknown> & { url: string } {
  return (
    typeof value === 'object' &&
    value !== null &&
    (value as Record<string, unknown>).event === 'ready' &&
    typeof (value as Record<string, unknown>).url === 'string'
  );
}

/**
 * Kills children still running when this process ends, whatever the way out: on exit, and on
 * SIGINT/SIGTERM (re-raised when nobody else handles them, e.g. `startTestServers()` does).
 */
const running = new Set<ChildProcess>();
let guarding = false;
function guardChildren(): void {
  if (guarding) return;
  guarding = true;
  const killAll = () => {
    for (const child of running) child.kill('SIGKILL');
    running.clear();
  };
  process.on('exit', killAll);
  for (const signal of ['SIGINT', 'SIGTERM'] as const) {
    const onSignal = () => {
      killAll();
      process.off(signal, onSignal);
      if (process.listenerCount(signal) === 0) process.kill(process.pid, signal);
    };
    process.on(signal, onSignal);
  }
}

/**
 * Starts a server as a child process and waits for the `{"event":"ready","url":…}` JSON line it
 * prints on stdout. Its stderr is kept quiet unless it fails (exits early, never gets ready, or
 * dies while running), then it is forwarded with the exit status. For node scripts pass
 * `process.execPath` as the command, so the child runs on the same Node as the benchmark.
 */
export function startChildServer(
  command: string,
  args: string[],
  env?: Record<string, string>,
  options: ChildServerOptions = {},
): Promise<ChildServer> {
  guardChildren();
  const readyTimeoutMs = options.readyTimeoutMs ?? 60_000;
  const stopTimeoutMs = options.stopTimeoutMs ?? 5_000;
  const name = [command, ...args].join(' ');
  const child = spawn(command, args, {
    stdio: ['ignore', 'pipe', 'pipe'],
    env: { ...process.env, ...env },
  });
  running.add(child);

  let stderr = '';
  let stdout = '';
  let stopping = false;
  child.stderr!.setEncoding('utf8');
  child.stderr!.on('data', (chunk: string) => {
    stderr = keepTail(stderr, chunk);
  });
  const exited = new Promise<void>((resolve) => child.once('close', () => resolve()));
  const report = (what: string) =>
    process.stderr.write(
      `[child-server] ${name} ${what}\n${stdout ? `stdout:\n${stdout}\n` : ''}${stderr ? `stderr:\n${stderr}\n` : ''}`,
    );

  return new Promise<ChildServer>((resolve, reject) => {
    let settled = false;
    const fail = (reason: string) => {
      if (settled) return;
      settled = true;
      clearTimeout(timer);
      report(reason);
      running.delete(child);
      child.kill('SIGKILL');
      reject(new Error(`${name}: ${reason}`));
    };
    const timer = setTimeout(() => fail(`not ready after ${readyTimeoutMs} ms`), readyTimeoutMs);

    child.once('error', (error) => fail(`could not start: ${error.message}`));
    child.once('exit', () => running.delete(child));
    // 'close' comes after the pipes are drained, so the report has the child's last words.
    child.once('close', (code, signal) => {
      if (!settled) fail(`exited before ready (${signal ?? `code ${code}`})`);
      else if (!stopping) report(`exited while running (${signal ?? `code ${code}`})`);
    });

    // Read every line, also after ready: an unread pipe would block the child when it fills.
    const lines = createInterface({ input: child.stdout!, crlfDelay: Number.POSITIVE_INFINITY });
    lines.on('line', (line) => {
      if (settled) return;
      stdout = keepTail(stdout, `${line}\n`);
      let parsed: unknown;
      try {
        parsed = JSON.parse(line);
      } catch {
        return;
      }
      if (!isReadyLine(parsed)) return;
      settled = true;
      clearTimeout(timer);
      resolve({
        url: parsed.url,
        pid: child.pid as number,
        ready: parsed,
        async stop() {
          if (stopping) return exited;
          stopping = true;
          // Stays in `running` until it is gone, so an exit meanwhile still kills it.
          if (child.exitCode === null && child.signalCode === null) child.kill('SIGTERM');
          const force = setTimeout(() => child.kill('SIGKILL'), stopTimeoutMs);
          await exited;
          clearTimeout(force);
        },
      });
    });
  });
}
