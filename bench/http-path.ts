/**
 * Where an instance's request time goes, for issue 17's "HTTP path close to node:http": the
 * PK lookup of scenario (a) against the same body served by a bare `node:http` server (B), by
 * a one-route Fastify app (F, the framework's own floor) and by bench:engine's baseline A (a
 * Fastify + mysql2 server asking MariaDB the same, bench/lib/sql-baseline-server.ts, with
 * MariaDB on the servers' CPU: A's CPU figures are both processes'), measured in one run with
 * the same load settings. With `--profile` the instance runs again under `--cpu-prof` and its self time
 * is printed by area (HTTP stack, Fastify, logging, metrics, engine, …).
 *
 *   node bench/http-path.ts [--fact-rows N] [--seconds S] [--connections C] [--profile]
 *     [--rounds R] [--log-level warn|info] [--before <other checkout>/packages/cli/bin/replix.js]
 *     [--scenario lookup|embed] [--load wrk|autocannon] [--warm-up-seconds 12]
 *
 * Every server first takes `--warm-up-seconds` of the same load, unmeasured: the figures are a
 * long-running server's, whose code V8 has optimized throughout.
 *
 * The load comes from `wrk` on CPU 1 with every server on CPU 0 when the machine has wrk
 * (`apt-get install wrk`), taskset and 2 CPUs (`--load wrk`, the default then): each server
 * saturated on a core of its own. Else from autocannon in this process (`--load autocannon`),
 * which shares the servers' cores, so its rounds spread wider.
 *
 * `--scenario embed` measures scenario (d) instead: a `dim` row and its 10 `fact` children, every
 * column of both, the children found through the foreign key's index.
 */
import { mkdtempSync, readdirSync, readFileSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { fileURLToPath } from 'node:url';
import { parseArgs } from 'node:util';
import { INSTANCE_MALLOC_ENVIRONMENT } from '@replix/instance-protocol';
import { mariaDbAdmin, startTestServers } from '@replix/testkit';
import { type ChildServer, startChildServer } from './lib/child-server.ts';
import { createBenchDataset } from './lib/dataset.ts';
import { meanBodyBytes, measureThroughput, type ThroughputResult } from './lib/http-load.ts';
import { median } from './lib/median.ts';
import { printTable } from './lib/report.ts';
import { LOAD_CPU, pinToCpu, runWrk, SERVER_CPU, wrkUsable } from './lib/wrk-load.ts';

const { values: args } = parseArgs({
  options: {
    'fact-rows': { type: 'string', default: '100000' },
    seconds: { type: 'string', default: '3' },
    connections: { type: 'string', default: '16' },
    rounds: { type: 'string', default: '6' },
    // Load each server takes before the rounds: a long-running server's code is all optimized,
    // and the instance's, larger than B's or F's, takes longer to get there.
    'warm-up-seconds': { type: 'string', default: '12' },
    profile: { type: 'boolean', default: false },
    // bench:engine's level; at info every request writes a line (to a pipe this process reads).
    'log-level': { type: 'string', default: 'warn' },
    // Another checkout's `packages/cli/bin/replix.js`, measured in the same run (before/after).
    before: { type: 'string' },
    scenario: { type: 'string', default: 'lookup' },
    load: { type: 'string' },
  },
});
const factRows = Number(args['fact-rows']);
if (args.scenario !== 'lookup' && args.scenario !== 'embed')
  throw new Error(`--scenario must be lookup or embed, not ${args.scenario}`);
const embed = args.scenario === 'embed';
const useWrk = (args.load ?? (wrkUsable() ? 'wrk' : 'autocannon')) === 'wrk';
if (args.load !== undefined && args.load !== 'wrk' && args.load !== 'autocannon')
  throw new Error(`--load must be wrk or autocannon, not ${args.load}`);
if (useWrk && !wrkUsable()) throw new Error('--load wrk needs wrk, taskset and 2 CPUs');
const rounds = Number(args.rounds);
const warmUpSeconds = Number(args['warm-up-seconds']);
const load = {
  connections: Number(args.connections),
  durationSeconds: Number(args.seconds),
  warmupSeconds: 1,
};

const replixBin = fileURLToPath(new URL('../packages/cli/bin/replix.js', import.meta.url));
const bareScript = fileURLToPath(new URL('./lib/fixed-body-server.ts', import.meta.url));
const fastifyScript = fileURLToPath(new URL('./lib/fastify-fixed-server.ts', import.meta.url));
const sqlScript = fileURLToPath(new URL('./lib/sql-baseline-server.ts', import.meta.url));
const log = (message: string) => process.stderr.write(`${message}\n`);

interface ProfileNode {
  id: number;
  callFrame: { functionName: string; url: string };
  children?: number[];
}
interface CpuProfile {
  startTime: number;
  nodes: ProfileNode[];
  samples: number[];
  timeDeltas: number[];
}

/** The area a profiled function belongs to, from its script's URL. */
function areaOf(node: ProfileNode): string {
  const { url, functionName } = node.callFrame;
  if (!url) {
    if (functionName === '(garbage collector)') return 'garbage collection';
    if (functionName === '(idle)') return 'idle';
    if (functionName === '(program)') return 'native (program)';
    return `native: ${functionName || 'anonymous'}`;
  }
  const area = AREAS.find(([pattern]) => pattern.test(url));
  return area ? area[1] : url.replace(/^.*\/node_modules\//, 'other dep: ').slice(0, 60);
}

const AREAS: Array<[RegExp, string]> = [
  [
    /node_modules\/(pino|thread-stream|sonic-boom|fast-redact|quick-format|on-exit-leak|atomic-sleep|safe-stable)/,
    'logging (pino)',
  ],
  [/node_modules\/(prom-client|tdigest|bintrees)/, 'metrics (prom-client)'],
  [/node_modules\/@fastify\/cors/, 'CORS (@fastify/cors)'],
  [
    /node_modules\/(fastify|find-my-way|avvio|light-my-request|@fastify|fast-querystring|fast-json-stringify|toad-cache|process-warning|abstract-logging|ret|safe-regex2|rfdc|secure-json-parse)/,
    'Fastify',
  ],
  [/node_modules\/lru-cache/, 'plan and ETag caches (lru-cache)'],
  [/packages\/engine\//, 'engine'],
  [/packages\/instance\//, 'instance (request path)'],
  [
    /^node:(_http|http|net|stream|internal\/(http|streams|stream_base|net|timers|url))/,
    'node:http, net, streams',
  ],
  [/^node:(internal\/crypto|crypto)/, 'node:crypto'],
  [
    /^node:internal\/(abort_controller|event_target|timers)|^node:timers/,
    'AbortSignal, timers, events',
  ],
  [/^node:/, 'other node: internals'],
];

/** Microseconds on the monotonic clock, which `--cpu-prof` timestamps use too. */
const nowMicros = () => Number(process.hrtime.bigint() / 1000n);

/** Each sample's node and duration, within [from, to] (monotonic µs): the load, not the start-up. */
function* samplesWithin(profile: CpuProfile, from: number, to: number) {
  const byId = new Map(profile.nodes.map((node) => [node.id, node]));
  let at = profile.startTime;
  for (let i = 0; i < profile.samples.length; i++) {
    const micros = profile.timeDeltas[i] ?? 0;
    at += micros;
    if (at < from || at > to) continue;
    const node = byId.get(profile.samples[i] as number);
    if (node && node.callFrame.functionName !== '(idle)') yield { node, micros };
  }
}

/** The functions with the most self time, largest first. */
function topFunctions(
  samples: Iterable<{ node: ProfileNode; micros: number }>,
  count: number,
): Record<string, string | number>[] {
  const totals = new Map<string, number>();
  let busy = 0;
  for (const { node, micros } of samples) {
    busy += micros;
    const where = node.callFrame.url.replace(/^.*\/(node_modules|packages)\//, '').slice(-48);
    const name = `${node.callFrame.functionName || '(anonymous)'} ${where}`;
    totals.set(name, (totals.get(name) ?? 0) + micros);
  }
  return [...totals]
    .sort((a, b) => b[1] - a[1])
    .slice(0, count)
    .map(([name, micros]) => ({ function: name, share: `${((100 * micros) / busy).toFixed(1)}%` }));
}

/** Self time by area over the profile's non-idle samples, largest first. */
function summariseProfile(
  samples: Iterable<{ node: ProfileNode; micros: number }>,
): Record<string, string | number>[] {
  const totals = new Map<string, number>();
  let busy = 0;
  for (const { node, micros } of samples) {
    const area = areaOf(node);
    busy += micros;
    totals.set(area, (totals.get(area) ?? 0) + micros);
  }
  return [...totals]
    .sort((a, b) => b[1] - a[1])
    .slice(0, 16)
    .map(([area, micros]) => ({
      area,
      'share of busy time': `${((100 * micros) / busy).toFixed(1)}%`,
    }));
}

/**
 * What the kernel counted so far for processes together (Linux `/proc/<pid>/stat` and each
 * thread's `status`): user and system (kernel) CPU time in µs, minor page faults and context
 * switches; a server's, or baseline A's with its database's. The last two tell kernel time
 * that is not the requests' own syscalls: fresh pages touched, threads woken.
 */
function kernelCounts(pids: readonly number[]): KernelCounts {
  const counts = { user: 0, system: 0, faults: 0, switches: 0 };
  for (const pid of pids) {
    const fields = readFileSync(`/proc/${pid}/stat`, 'utf8').split(') ')[1]?.split(' ') ?? [];
    // minflt is field 10; utime and stime are 14 and 15, in clock ticks (100 per second).
    counts.faults += Number(fields[7]);
    counts.user += Number(fields[11]) * 10_000;
    counts.system += Number(fields[12]) * 10_000;
    for (const task of readdirSync(`/proc/${pid}/task`)) {
      const status = readFileSync(`/proc/${pid}/task/${task}/status`, 'utf8');
      for (const match of status.matchAll(/ctxt_switches:\s+(\d+)/g))
        counts.switches += Number(match[1]);
    }
  }
  return counts;
}

interface KernelCounts {
  user: number;
  system: number;
  faults: number;
  switches: number;
}

/** The figures per request between two readings of `kernelCounts`. */
function perRequest(before: KernelCounts, after: KernelCounts, requests: number) {
  const system = after.system - before.system;
  return {
    cpuMicrosPerRequest: (after.user - before.user + system) / requests,
    kernelMicrosPerRequest: system / requests,
    faultsPerRequest: (after.faults - before.faults) / requests,
    switchesPerRequest: (after.switches - before.switches) / requests,
  };
}

type Measured = ThroughputResult & ReturnType<typeof perRequest>;

/** A server's rounds as one result: the median of each figure. */
function medianResult(runs: readonly Measured[]): Measured {
  const of = (figure: (run: Measured) => number) => median(runs.map(figure));
  return {
    requestsPerSecond: of((run) => run.requestsPerSecond),
    p50Ms: of((run) => run.p50Ms),
    p99Ms: of((run) => run.p99Ms),
    non2xx: runs.reduce((sum, run) => sum + run.non2xx, 0),
    errors: runs.reduce((sum, run) => sum + run.errors, 0),
    bytesPerResponse: of((run) => run.bytesPerResponse),
    bodyBytes: of((run) => run.bodyBytes),
    cpuMicrosPerRequest: of((run) => run.cpuMicrosPerRequest),
    kernelMicrosPerRequest: of((run) => run.kernelMicrosPerRequest),
    faultsPerRequest: of((run) => run.faultsPerRequest),
    switchesPerRequest: of((run) => run.switchesPerRequest),
  };
}

/**
 * Throughput, and the server's CPU time per request: on a machine shared with the load
 * generator (and other work), CPU per request is the steadier figure of the two.
 */
async function measureWithCpu(
  pids: readonly number[],
  target: { url: string; paths: string[]; headers?: Record<string, string> },
): Promise<Measured> {
  if (useWrk) return measureWithWrk(pids, target);
  await measureThroughput({ ...target, ...load, durationSeconds: 1, warmupSeconds: 0 });
  const before = kernelCounts(pids);
  const result = await measureThroughput({ ...target, ...load, warmupSeconds: 0 });
  const after = kernelCounts(pids);
  // The run, one request per path for the body size, and one to settle.
  const requests = result.requestsPerSecond * load.durationSeconds + target.paths.length + 1;
  return { ...result, ...perRequest(before, after, requests) };
}

/** `measureWithCpu` with wrk on its own CPU (the server pinned to another when it started). */
async function measureWithWrk(
  pids: readonly number[],
  target: { url: string; paths: string[]; headers?: Record<string, string> },
): Promise<Measured> {
  const options = { ...target, connections: load.connections, cpu: LOAD_CPU };
  await runWrk({ ...options, durationSeconds: 1 });
  const before = kernelCounts(pids);
  const result = await runWrk({ ...options, durationSeconds: load.durationSeconds });
  const after = kernelCounts(pids);
  return {
    ...result,
    bodyBytes: await meanBodyBytes(target),
    ...perRequest(before, after, result.requests),
  };
}

const servers = await startTestServers();
const children: ChildServer[] = [];
const profileDir = mkdtempSync(join(tmpdir(), 'replix-http-path-'));
try {
  log(`dataset: ${factRows} fact rows…`);
  const dimRows = Math.max(1, Math.round(factRows / 10));
  const dataset = await createBenchDataset(mariaDbAdmin(servers.mariadb.url), {
    factRows,
    dimRows,
  });
  const url = dataset.database.url;
  // The ids bench:engine's scenarios (a) and (d) use.
  const ids = Array.from({ length: 200 }, (_, i) => 1 + ((i * 4999) % factRows));
  const queries = embed
    ? ids.map((id) => `dim (id = ${1 + (id % dimRows)}) { * fact { * } }`)
    : ids.map((id) => `fact (id = ${id}) { id qty amount }`);
  const paths = queries.map((query) => `/query?q=${encodeURIComponent(query)}`);

  const startReplix = async (nodeFlags: string[], bin = replixBin) => {
    const child = await startChildServer(
      process.execPath,
      [...nodeFlags, bin, 'serve', '--source', url, '--port', '0'],
      // Started as the drivers start an instance (launchEnvironment): malloc on huge pages.
      {
        REPLIX_LOG_LEVEL: String(args['log-level']),
        REPLIX_THREADS: '1',
        ...INSTANCE_MALLOC_ENVIRONMENT,
      },
      { readyTimeoutMs: 300_000, stopTimeoutMs: 15_000 },
    );
    children.push(child);
    if (useWrk) pinToCpu(child.pid, SERVER_CPU);
    return child;
  };
  const measureReplix = (child: ChildServer) =>
    measureWithCpu([child.pid], {
      url: child.url,
      paths,
      headers: { Authorization: `Bearer ${String(child.ready.apiKey)}` },
    });
  const startFixed = async (script: string, bytes: number) => {
    const child = await startChildServer(process.execPath, [
      script,
      '--bytes',
      String(Math.round(bytes)),
      '--port',
      '0',
    ]);
    if (useWrk) pinToCpu(child.pid, SERVER_CPU);
    return child;
  };
  const measureFixed = (child: ChildServer) =>
    measureWithCpu([child.pid], { url: child.url, paths: ['/'] });
  // Baseline A, what a user would build instead (bench/lib/sql-baseline-server.ts), with the
  // MariaDB it asks on its CPU: the system answering is the server and its database, as the
  // instance answers alone. Its CPU figures are both processes'.
  const mariaDbPid = Number(readFileSync(join(servers.mariadb.dir, 'mysqld.pid'), 'utf8'));
  const startSql = async () => {
    const child = await startChildServer(process.execPath, [
      sqlScript,
      '--url',
      url,
      '--port',
      '0',
    ]);
    children.push(child);
    if (useWrk) {
      pinToCpu(child.pid, SERVER_CPU);
      pinToCpu(mariaDbPid, SERVER_CPU);
    }
    return child;
  };
  const sqlPaths = embed
    ? ids.map((id) => `/d?id=${1 + (id % dimRows)}`)
    : ids.map((id) => `/a?id=${id}`);
  const measureSql = (child: ChildServer) =>
    measureWithCpu([child.pid, mariaDbPid], { url: child.url, paths: sqlPaths });

  // Every server runs for the whole bench and is measured once per round, in turn: this
  // machine's speed drifts by tens of percent from minute to minute (other work, CPU boost), so
  // each round's ratios compare servers measured moments apart, and the medians are reported.
  log(`measuring the instance, B (node:http) and F (Fastify) at its body size, ${rounds} rounds…`);
  const replix = await startReplix([]);
  const other = args.before ? await startReplix([], args.before) : undefined;
  // One run for the answer's size, which B and F then serve.
  const sizing = await measureReplix(replix);
  const bareServer = await startFixed(bareScript, sizing.bodyBytes);
  const fastifyServer = await startFixed(fastifyScript, sizing.bodyBytes);
  const sqlServer = await startSql();
  const results: Record<'ours' | 'before' | 'bare' | 'fastify' | 'sql', Measured[]> = {
    ours: [],
    before: [],
    bare: [],
    fastify: [],
    sql: [],
  };
  // Each round measures every server once, in turn, the order reversed every other round
  // (A B C, C B A, …) so that a drift of the machine's speed weighs on each alike.
  const measured: Array<[keyof typeof results, () => Promise<Measured>]> = [
    ['ours', () => measureReplix(replix)],
    ...(other
      ? [['before', () => measureReplix(other)] as [keyof typeof results, () => Promise<Measured>]]
      : []),
    ['bare', () => measureFixed(bareServer)],
    ['fastify', () => measureFixed(fastifyServer)],
    ['sql', () => measureSql(sqlServer)],
  ];
  log(`warming every server up: ${warmUpSeconds} s of load each…`);
  for (const [, measure] of measured) {
    for (let seconds = 0; seconds < warmUpSeconds; seconds += load.durationSeconds + 1)
      await measure();
  }
  for (let round = 0; round < rounds; round++) {
    const order = round % 2 === 0 ? measured : [...measured].reverse();
    for (const [name, measure] of order) results[name].push(await measure());
  }
  const ours = medianResult(results.ours);
  const before = other ? medianResult(results.before) : undefined;
  const bare = medianResult(results.bare);
  const fastify = medianResult(results.fastify);
  const sql = medianResult(results.sql);
  for (const child of [replix, bareServer, fastifyServer, sqlServer, ...(other ? [other] : [])])
    await child.stop();

  const row = (name: string, result: Measured) => ({
    server: name,
    'req/s': Math.round(result.requestsPerSecond),
    '÷ B': (result.requestsPerSecond / bare.requestsPerSecond).toFixed(2),
    'CPU µs/request': Math.round(result.cpuMicrosPerRequest),
    'of which kernel': Math.round(result.kernelMicrosPerRequest),
    'page faults/request': result.faultsPerRequest.toFixed(3),
    'switches/request': result.switchesPerRequest.toFixed(3),
    'B ÷ CPU': (bare.cpuMicrosPerRequest / result.cpuMicrosPerRequest).toFixed(2),
    'p50 ms': result.p50Ms,
    'p99 ms': result.p99Ms,
    'bytes/response': Math.round(result.bytesPerResponse),
    'non-2xx': result.non2xx,
    errors: result.errors,
  });
  printTable(
    `${embed ? '(d) parent + 10 children' : '(a) PK lookup'} over HTTP, ${useWrk ? `wrk on CPU ${LOAD_CPU}, servers on CPU ${SERVER_CPU}` : 'autocannon in this process'}, ${load.connections} connections, median of ${rounds} rounds of ${load.durationSeconds} s, body ${Math.round(ours.bodyBytes)} bytes, log level ${args['log-level']}`,
    [
      row('Replix instance, 1 thread', ours),
      ...(before ? [row(`the same, before: ${args.before}`, before)] : []),
      row('B: bare node:http', bare),
      row('F: one-route Fastify', fastify),
      row('A: Fastify + mysql2, with MariaDB', sql),
    ],
  );

  /**
   * The instance's `figure` over another server's in each round (the servers measured moments
   * apart), their median, and how they read.
   */
  const perRound = (theirs: Measured[], figure: (result: Measured) => number) => {
    const rounds = results.ours.map((result, i) => figure(result) / figure(theirs[i] as Measured));
    const ratio = median(rounds);
    return {
      ratio,
      text: `${ratio.toFixed(2)} (rounds: ${rounds.map((r) => r.toFixed(2)).join(', ')})`,
    };
  };
  const cpu = (result: Measured) => result.cpuMicrosPerRequest;
  const throughput = (result: Measured) => result.requestsPerSecond;
  const goalRow = (
    goal: string,
    { ratio, text }: { ratio: number; text: string },
    sense?: 'atLeast' | 'atMost',
    target?: number,
  ) => ({
    goal,
    measured: text,
    target: sense === undefined ? '' : `${sense === 'atLeast' ? '>=' : '<='} ${target}`,
    met:
      sense === undefined || target === undefined
        ? ''
        : (sense === 'atLeast' ? ratio >= target : ratio <= target)
          ? 'yes'
          : 'NO',
  });
  // Issue 27's goals: for the lookup CPU against F and req/s against A and B; for the embed,
  // req/s against A (bench:engine reads both too, with the same pinning when wrk is usable).
  printTable(
    'Goals (issue 27)',
    embed
      ? [
          goalRow(
            'CPU per embed request / one-route Fastify (F), no goal',
            perRound(results.fastify, cpu),
          ),
          goalRow(
            '(d) parent + 10 children, req/s / A',
            perRound(results.sql, throughput),
            'atLeast',
            5,
          ),
        ]
      : [
          goalRow(
            'CPU per PK-lookup request / one-route Fastify (F)',
            perRound(results.fastify, cpu),
            'atMost',
            1.3,
          ),
          goalRow('(a) PK lookup, req/s / A', perRound(results.sql, throughput), 'atLeast', 3),
          goalRow('(a) PK lookup, req/s / B', perRound(results.bare, throughput), 'atLeast', 0.8),
        ],
  );
  if (other) log(`CPU per request, this checkout ÷ before: ${perRound(results.before, cpu).text}`);

  if (args.profile) {
    log('profiling the instance under the same load…');
    const profiled = await startReplix(['--cpu-prof', '--cpu-prof-dir', profileDir]);
    const from = nowMicros();
    await measureReplix(profiled);
    const to = nowMicros();
    await profiled.stop();
    const file = readdirSync(profileDir).find((name) => name.endsWith('.cpuprofile'));
    if (!file) throw new Error('the instance wrote no CPU profile');
    const profile = JSON.parse(readFileSync(join(profileDir, file), 'utf8')) as CpuProfile;
    printTable(
      'Instance CPU self time by area, under load',
      summariseProfile(samplesWithin(profile, from, to)),
    );
    printTable(
      'Instance CPU self time, top functions under load',
      topFunctions(samplesWithin(profile, from, to), 30),
    );
  }
} finally {
  for (const child of children) await child.stop();
  rmSync(profileDir, { recursive: true, force: true });
  await servers.stop();
}
