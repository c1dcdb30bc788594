/**
 * HTTP load from `wrk` (Debian's package) on a CPU of its own, for measuring a server's CPU per
 * request while it is saturated: autocannon runs in the bench's own Node.js process, which on
 * this 2-core machine shares the server's core half the time, so the server's figures move with
 * the scheduler (rounds of one run spread over ±30%). `wrk` is C, drives a Node.js server past
 * its limit from one thread, and pinned apart from the servers (`pinToCpu`) it leaves each
 * server a core of its own.
 *
 * Every request of a run rotates over `paths` with the same headers, as `measureThroughput`
 * does (one Lua script, paths from a file).
 */
import { execFile, execFileSync, spawnSync } from 'node:child_process';
import { mkdtempSync, rmSync, writeFileSync } from 'node:fs';
import { availableParallelism, tmpdir } from 'node:os';
import { join } from 'node:path';
import { promisify } from 'node:util';
import { meanBodyBytes, type ThroughputOptions, type ThroughputResult } from './http-load.ts';

const execFileAsync = promisify(execFile);

export interface WrkOptions {
  url: string;
  paths: string[];
  headers?: Record<string, string>;
  connections: number;
  durationSeconds: number;
  /** The CPU wrk runs on (`taskset -c`), when the machine has it. */
  cpu?: number;
}

export interface WrkResult {
  requestsPerSecond: number;
  /** Requests wrk completed in the run (the CPU-per-request denominator). */
  requests: number;
  p50Ms: number;
  p99Ms: number;
  non2xx: number;
  errors: number;
  bytesPerResponse: number;
}

/** Where the servers run, pinned, and where wrk (and a sampler beside it) does. */
export const SERVER_CPU = 0;
export const LOAD_CPU = 1;

/** Whether `wrk` and `taskset` are on this machine and there are 2 CPUs to split. */
export function wrkUsable(): boolean {
  const found = (command: string) =>
    spawnSync(command, ['--version'], { stdio: 'ignore' }).error === undefined;
  return availableParallelism() >= 2 && found('wrk') && found('taskset');
}

/**
 * Moves every thread of `pid` onto `cpus` (a CPU's number, or a `taskset` list such as `0-1`);
 * children started later keep their own.
 */
export function pinToCpu(pid: number, cpus: number | string): void {
  execFileSync('taskset', ['--all-tasks', '--pid', '--cpu-list', String(cpus), String(pid)], {
    stdio: 'ignore',
  });
}

/** Every CPU of the machine, as a `taskset` list: what `pinToCpu` undoes a pin with. */
export function allCpus(): string {
  return `0-${availableParallelism() - 1}`;
}

// Paths from the file named by WRK_PATHS, one per line; the headers as `name: value` lines
// from WRK_HEADERS. A Lua string is never built from them, so no path can break the script.
const SCRIPT = `
local paths = {}
for line in io.lines(os.getenv("WRK_PATHS")) do paths[#paths + 1] = line end
local headers = {}
for line in io.lines(os.getenv("WRK_HEADERS")) do
  local name, value = line:match("^([^:]+): (.*)$")
  if name then headers[name] = value end
end
local next_path = 0
request = function()
  next_path = next_path % #paths + 1
  return wrk.format("GET", paths[next_path], headers)
end
`;

/** Seconds, milliseconds or microseconds as wrk prints a latency, in ms. */
function latencyMs(text: string | undefined): number {
  const match = /^([\d.]+)(us|ms|s)$/.exec(text ?? '');
  if (!match) return Number.NaN;
  const value = Number(match[1]);
  return match[2] === 'us' ? value / 1000 : match[2] === 's' ? value * 1000 : value;
}

const UNITS: Record<string, number> = { B: 1, KB: 1024, MB: 1024 ** 2, GB: 1024 ** 3 };

/** Runs wrk once against `options.url` and reads its report. */
export async function runWrk(options: WrkOptions): Promise<WrkResult> {
  if (options.paths.length === 0) throw new Error('runWrk needs at least one path');
  const folder = mkdtempSync(join(tmpdir(), 'replix-wrk-'));
  try {
    const script = join(folder, 'rotate.lua');
    const pathsFile = join(folder, 'paths.txt');
    const headersFile = join(folder, 'headers.txt');
    writeFileSync(script, SCRIPT);
    writeFileSync(pathsFile, `${options.paths.join('\n')}\n`);
    const headerLines = Object.entries(options.headers ?? {}).map(([k, v]) => `${k}: ${v}\n`);
    writeFileSync(headersFile, headerLines.join(''));
    const wrkArgs = [
      '--threads',
      '1',
      '--connections',
      String(options.connections),
      '--duration',
      `${options.durationSeconds}s`,
      '--latency',
      '--script',
      script,
      options.url,
    ];
    const [command, args] =
      options.cpu === undefined
        ? ['wrk', wrkArgs]
        : ['taskset', ['--cpu-list', String(options.cpu), 'wrk', ...wrkArgs]];
    const { stdout: report } = await execFileAsync(command as string, args as string[], {
      env: { ...process.env, WRK_PATHS: pathsFile, WRK_HEADERS: headersFile },
      encoding: 'utf8',
    });
    const requests = Number(/(\d+) requests in/.exec(report)?.[1]);
    const read = /requests in [\d.]+\w+, ([\d.]+)(B|KB|MB|GB) read/.exec(report);
    const errors = /Socket errors: connect (\d+), read (\d+), write (\d+), timeout (\d+)/.exec(
      report,
    );
    return {
      requestsPerSecond: Number(/Requests\/sec:\s+([\d.]+)/.exec(report)?.[1]),
      requests,
      p50Ms: latencyMs(/^\s+50%\s+(\S+)/m.exec(report)?.[1]),
      p99Ms: latencyMs(/^\s+99%\s+(\S+)/m.exec(report)?.[1]),
      non2xx: Number(/Non-2xx or 3xx responses: (\d+)/.exec(report)?.[1] ?? 0),
      errors: errors ? errors.slice(1).reduce((sum, n) => sum + Number(n), 0) : 0,
      bytesPerResponse: read
        ? (Number(read[1]) * (UNITS[read[2] as string] as number)) / requests
        : Number.NaN,
    };
  } finally {
    rmSync(folder, { recursive: true, force: true });
  }
}

/**
 * `measureThroughput`'s figures from wrk: with `pinned` processes (a server, and the database
 * it asks), those run on `SERVER_CPU` for the warm-up and the run, wrk on `LOAD_CPU`, and every
 * CPU is theirs again after; with none, wrk and the server share every CPU.
 */
export async function wrkThroughput(
  options: ThroughputOptions,
  pinned: readonly number[],
): Promise<ThroughputResult> {
  const target = {
    url: options.url,
    paths: options.paths,
    headers: options.headers,
    connections: options.connections ?? 10,
    ...(pinned.length > 0 ? { cpu: LOAD_CPU } : {}),
  };
  for (const pid of pinned) pinToCpu(pid, SERVER_CPU);
  try {
    const warmupSeconds = options.warmupSeconds ?? 1;
    if (warmupSeconds > 0) await runWrk({ ...target, durationSeconds: warmupSeconds });
    const result = await runWrk({ ...target, durationSeconds: options.durationSeconds ?? 5 });
    return { ...result, bodyBytes: await meanBodyBytes(options) };
  } finally {
    for (const pid of pinned) pinToCpu(pid, allCpus());
  }
}
