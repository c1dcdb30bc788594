import { Session } from 'node:inspector/promises';
import { parseArgs } from 'node:util';
import { compileSchema, parseSchemaConfig } from '@replix/engine';
import { loadSnapshot } from '@replix/instance';
import { connectorFromUrl } from '@replix/sources';
import { mariaDbAdmin, postgresAdmin, startTestServers } from '@replix/testkit';
import { createBenchDataset } from './lib/dataset.ts';
import { measureLoadRounds, medianRoundRatio } from './lib/load-rounds.ts';
import { createPgBenchDataset } from './lib/pg-dataset.ts';
import { type CpuProfile, profileBreakdown, topFunctions } from './lib/profile-breakdown.ts';
import { printTable } from './lib/report.ts';

const { values: args } = parseArgs({
  options: {
    'fact-rows': { type: 'string', default: '300000' },
    'dim-rows': { type: 'string', default: '100000' },
    rounds: { type: 'string', default: '3' },
    threads: { type: 'string', default: '1,2' },
    profile: { type: 'boolean', default: false },
    engine: { type: 'string', default: 'mariadb' },
  },
});
const factRows = Number(args['fact-rows']);
const dimRows = Number(args['dim-rows']);
const rounds = Number(args.rounds);
const threadCounts = args.threads.split(',').map(Number);
const postgres = args.engine === 'postgres';
if (!postgres && args.engine !== 'mariadb') throw new Error('--engine is mariadb or postgres');
const driver = postgres ? 'pg' : 'mysql2';
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
  const database = postgres
    ? await createPgBenchDataset(postgresAdmin(servers.postgres.url), { factRows, dimRows })
    : (await createBenchDataset(mariaDbAdmin(servers.mariadb.url), { factRows, dimRows })).database;
  const url = database.url;
  const connector = connectorFromUrl(url);
  const schema = compileSchema(await connector.introspect(), parseSchemaConfig({}));
  const load = async (threads: number) => {
    gc?.();
    const started = performance.now();
    await loadSnapshot(connector, schema, 1, () => {}, { threads });
    return performance.now() - started;
  };
  const measured = await measureLoadRounds(url, {
    rounds,
    threadCounts,
    onRound: (round, streamed, loads) =>
      log(
        `round ${round + 1}: stream ${fmt(streamed.ms, 0)} ms, ${threadCounts.map((t, i) => `load (${t} thread) ${fmt(loads[i]?.ms ?? Number.NaN, 0)} ms`).join(', ')}`,
      ),
  });
  const streamMs = measured.stream.map((timed) => timed.ms);
  const streamCpu = measured.stream.map((timed) => timed.cpuMs);
  const loadMs = measured.loads.map((loads) => loads.map((timed) => timed.ms));
  const loadCpu = measured.loads.map((loads) => loads.map((timed) => timed.cpuMs));
  const stream = median(streamMs);
  const cpu = median(streamCpu);
  // CPU time beside wall time: on a machine shared with other work, the wall time of both
  // grows with the load average, their CPU time much less.
  printTable(
    `Snapshot load, median of ${rounds} (${factRows} + ${dimRows} rows; ratios: the median of each round's)`,
    [
      {
        measure: `${driver} stream`,
        ms: fmt(stream, 0),
        ratio: '',
        'cpu ms': fmt(cpu, 0),
        'cpu ratio': '',
      },
      ...threadCounts.map((threads, i) => ({
        measure: `snapshot load, ${threads} thread(s) (goal ≤ 1.2× stream)`,
        ms: fmt(median(loadMs[i]!), 0),
        ratio: fmt(medianRoundRatio(measured, i, (timed) => timed.ms)),
        'cpu ms': fmt(median(loadCpu[i]!), 0),
        'cpu ratio': fmt(medianRoundRatio(measured, i, (timed) => timed.cpuMs)),
      })),
    ],
  );

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
  await database.drop();
} finally {
  await servers.stop();
}
