/**
 * The snapshot load against the bare driver streaming the same rows to nowhere, measured in
 * alternating rounds, each measurement in a fresh process (`load-once.ts`): a round is the
 * stream, then the load with each thread count. This machine's speed drifts by tens of percent
 * from minute to minute, so each round's ratio compares runs made moments apart, and the median
 * of those ratios is the figure (bench:load, bench:engine).
 */
import { execFile } from 'node:child_process';
import { fileURLToPath } from 'node:url';
import { promisify } from 'node:util';
import { median } from './median.ts';
import { timeMysqlStream } from './mysql-stream-baseline.ts';
import { timePgStream } from './pg-stream-baseline.ts';

const run = promisify(execFile);
const loadOnce = fileURLToPath(new URL('./load-once.ts', import.meta.url));

/** One process's wall time and CPU time (user + system, every thread). */
export interface Timed {
  readonly ms: number;
  readonly cpuMs: number;
}

export interface LoadRounds {
  readonly stream: Timed[];
  /** Per thread count (in the order asked), one load per round. */
  readonly loads: Timed[][];
}

/** `rounds` rounds of the stream and a load per thread count, after one unmeasured stream. */
export async function measureLoadRounds(
  url: string,
  options: {
    rounds: number;
    threadCounts: readonly number[];
    onRound?: (round: number, stream: Timed, loads: readonly Timed[]) => void;
  },
): Promise<LoadRounds> {
  const once = async (...args: string[]): Promise<Timed> => {
    const { stdout } = await run(process.execPath, [loadOnce, url, ...args]);
    return JSON.parse(stdout) as Timed;
  };
  // Once, unmeasured: the server's buffer pool warms up.
  await (url.startsWith('postgres') ? timePgStream : timeMysqlStream)(url, ['dim', 'fact']);
  const stream: Timed[] = [];
  const loads = options.threadCounts.map((): Timed[] => []);
  for (let round = 0; round < options.rounds; round++) {
    const streamed = await once('stream');
    stream.push(streamed);
    const loaded: Timed[] = [];
    for (const [i, threads] of options.threadCounts.entries()) {
      const timed = await once('load', String(threads));
      loads[i]?.push(timed);
      loaded.push(timed);
    }
    options.onRound?.(round, streamed, loaded);
  }
  return { stream, loads };
}

/** The median of each round's `figure(load) / figure(stream)`. */
export function medianRoundRatio(
  rounds: LoadRounds,
  threadIndex: number,
  figure: (timed: Timed) => number,
): number {
  const loads = rounds.loads[threadIndex] ?? [];
  return median(loads.map((load, round) => figure(load) / figure(rounds.stream[round] as Timed)));
}
