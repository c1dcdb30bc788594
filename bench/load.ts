/**
 * `npm run bench:load`: the snapshot load against plain mysql2 streaming the same rows to
 * nowhere, measured alternately in one run on real MariaDB (issue 17, "Loading at the speed of
 * the wire"), and with `--profile` a CPU profile of one load, its self time summed by where the
 * code lives (mysql2's parsing, the connector's conversion, column building, index building…).
 *
 * Each round measures the stream, then the load with each thread count of `--threads` (this
 * thread included; 1 reads every table here, one after the other), each in a fresh process
 * (bench/lib/load-once.ts) so that every measurement starts as cold as an instance's first load.
 *
 *   node --expose-gc bench/load.ts [--fact-rows N] [--dim-rows N] [--rounds R] [--threads 1,2]
 *     [--profile]
 */
import { execFile } from 'node:child_process';
import { Session } from 'node:inspector/promises';
import { fileURLToPath } from 'node:url';
import { parseArgs, promisify } from 'node:util';
import { compileSchema, parseSchemaConfig } from '@replix/engine';
import { loadSnapshot } from '@replix/instance';
import { connectorFromUrl } from '@replix/sources';
import { mariaDbAdmin, startTestServers } from '@replix/testkit';
import { createBenchDataset } from './lib/dataset.ts';
import { timeMysqlStream } from './lib/mysql-stream-baseline.ts';
import { type CpuProfile, profileBreakdown, topFunctions } from './lib/profile-breakdown.ts';
import { printTable } from './lib/report.ts';

const { values: args } = parseArgs({
  options: {
    'fact-rows': { type: 'string', default: '300000' },
    'dim-rows': { type: 'string', default: '100000' },
    rounds: { type: 'string', default: '3' },
    threads: { type: 'string', default: '1,2' },
    profile: { type: 'boolean', default: false },
  },
});
const factRows = Number(args['fact-rows']);
const dimRows = Number(args['dim-rows']);
const rounds = Number(args.rounds);
const threadCounts = args.threads.split(',').map(Number);
const run = promisify(execFile);
const loadOnce = fileURLToPath(new URL('./lib/load-once.ts', import.meta.url));
const gc = (globalThis as { gc?: () => void }).gc;
const log = (message: string) => process.stderr.write(`${message}\n`);
const fmt = (n: number, digits = 2) => n.toFixed(digits);

function median(values: number[]): number {
  const sorted = [...values].sort((a, b) => a - b);
  return sorted[Math.floor(sorted.length / 2)] ?? Number.NaN;
}

const servers = await startTestServers();
try {
  log(`dataset: ${factRows} fact rows, ${dimRows} dim rows…`);
  const dataset = await createBenchDataset(mariaDbAdmin(servers.mariadb.url), {
    factRows,
    dimRows,
  });
  const url = dataset.database.url;
  const connector = connectorFromUrl(url);
  const schema = compileSchema(await connector.introspect(), parseSchemaConfig({}));
  const load = async (threads: number) => {
    gc?.();
    const started = performance.now();
    await loadSnapshot(connector, schema, 1, () => {}, { threads });
    return performance.now() - started;
  };
  const once = async (...args: string[]) => {
    const { stdout } = await run(process.execPath, [loadOnce, url, ...args]);
    return JSON.parse(stdout) as { ms: number; cpuMs: number };
  };
  // Once, unmeasured: the server's buffer pool warms up.
  await timeMysqlStream(url, ['dim', 'fact']);
  const streamMs: number[] = [];
  const streamCpu: number[] = [];
  const loadMs = threadCounts.map((): number[] => []);
  const loadCpu = threadCounts.map((): number[] => []);
  for (let round = 0; round < rounds; round++) {
    const streamed = await once('stream');
    streamMs.push(streamed.ms);
    streamCpu.push(streamed.cpuMs);
    for (const [i, threads] of threadCounts.entries()) {
      const loaded = await once('load', String(threads));
      loadMs[i]!.push(loaded.ms);
      loadCpu[i]!.push(loaded.cpuMs);
    }
    log(
      `round ${round + 1}: stream ${fmt(streamMs.at(-1)!, 0)} ms, ${threadCounts.map((t, i) => `load (${t} thread) ${fmt(loadMs[i]!.at(-1)!, 0)} ms`).join(', ')}`,
    );
  }
  const stream = median(streamMs);
  const cpu = median(streamCpu);
  // CPU time beside wall time: on a machine shared with other work, the wall time of both
  // grows with the load average, their CPU time much less.
  printTable(`Snapshot load, median of ${rounds} (${factRows} + ${dimRows} rows)`, [
    {
      measure: 'mysql2 stream',
      ms: fmt(stream, 0),
      ratio: '',
      'cpu ms': fmt(cpu, 0),
      'cpu ratio': '',
    },
    ...threadCounts.map((threads, i) => ({
      measure: `snapshot load, ${threads} thread(s) (goal ≤ 1.2× stream)`,
      ms: fmt(median(loadMs[i]!), 0),
      ratio: fmt(median(loadMs[i]!) / stream),
      'cpu ms': fmt(median(loadCpu[i]!), 0),
      'cpu ratio': fmt(median(loadCpu[i]!) / cpu),
    })),
  ]);

  if (args.profile) {
    await load(threadCounts.at(-1)!); // warm, so that the profile shows the steady costs
    const session = new Session();
    session.connect();
    await session.post('Profiler.enable');
    await session.post('Profiler.setSamplingInterval', { interval: 200 });
    await session.post('Profiler.start');
    const ms = await load(threadCounts.at(-1)!);
    const { profile } = (await session.post('Profiler.stop')) as { profile: CpuProfile };
    session.disconnect();
    printTable(
      `Where the main thread's time goes in one load (${fmt(ms, 0)} ms)`,
      profileBreakdown(profile).map((part) => ({
        part: part.name,
        ms: fmt(part.ms, 0),
        share: `${fmt(part.share * 100, 1)}%`,
      })),
    );
    printTable(
      'The functions with the most self time',
      topFunctions(profile, 25).map((f) => ({ function: f.name, ms: fmt(f.ms, 0) })),
    );
  }
  await connector.close();
  await dataset.database.drop();
} finally {
  await servers.stop();
}
