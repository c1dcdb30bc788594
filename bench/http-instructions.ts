/**
 * Instructions per PK-lookup request over HTTP, the instance's whole main thread (node:http,
 * the request path, the engine), against the same body served by a bare `node:http` server (B)
 * and a one-route Fastify app (F), counted by valgrind's callgrind: the figure behind issue 27's
 * "CPU per request ≤ 1.3× F" that this machine's drifting speed cannot move. User space only:
 * the kernel's share (the sends) is in `bench:http`'s CPU times, not here.
 *
 * Each server runs under callgrind, counting nothing until it has answered a warm-up, then
 * counting two windows, `--requests` requests and five times as many (`callgrind_control`); the
 * difference of the two counts, per request, cancels what a window costs whatever its length.
 * Node runs with `--single-threaded --predictable` (no concurrent compilation or GC, whose timing
 * would move a count by far more than a request costs), and V8's optimizing compilers are not
 * counted: what is left is a warm server's steady state. With `--before`, another checkout's
 * instance is counted the same way. `--keep <folder>` keeps the dumps and V8's maps of its
 * compiled code (`/tmp/perf-<pid>.map`), for `callgrind_annotate`.
 *
 * With `--cache-sim`, callgrind also simulates the caches and branch predictors: per request,
 * first-level instruction and data cache misses and mispredicted branches, and the cycle
 * estimate KCachegrind shows (`CEst`, from those counts). A request of the instance executes
 * about 1.2× B's instructions but runs in 1.3-2× B's time: more distinct code per request
 * misses the instruction cache and the predictors more, which instructions alone do not show.
 *
 *   npm run bench:http-instructions [-- --requests 4000 --warm-up 40000 --before <checkout>]
 *     [--keep dir] [--cache-sim]
 *
 * Needs valgrind (Debian's package).
 */
import { spawnSync } from 'node:child_process';
import { mkdirSync, mkdtempSync, readdirSync, readFileSync, rmSync } from 'node:fs';
import { Agent, request } from 'node:http';
import { tmpdir } from 'node:os';
import { join, resolve } from 'node:path';
import { fileURLToPath } from 'node:url';
import { parseArgs } from 'node:util';
import { mariaDbAdmin, startTestServers } from '@replix/testkit';
import { startChildServer } from './lib/child-server.ts';
import { createBenchDataset } from './lib/dataset.ts';
import { printTable } from './lib/report.ts';

const { values: args } = parseArgs({
  options: {
    before: { type: 'string' },
    requests: { type: 'string', default: '4000' },
    connections: { type: 'string', default: '8' },
    // A long-running server's code is optimized throughout; after 3,000 requests much of a
    // Replix instance's still ran in Maglev's code, and counted 4% more than at 40,000.
    'warm-up': { type: 'string', default: '40000' },
    // Keeps the callgrind dumps (and V8's perf maps of JIT code) in this folder, for reading.
    keep: { type: 'string' },
    'cache-sim': { type: 'boolean', default: false },
  },
});
const requests = Number(args.requests);
const connections = Number(args.connections);
/**
 * V8's entries into its optimizing compilers (Turbofan, Maglev), as callgrind names them; their
 * inclusive counts are taken out of each window's. A server still tiers its code up tens of
 * thousands of requests after any warm-up this bench can afford under valgrind (on the main
 * thread here: --single-threaded), and how much it compiles in a window moves the count by a
 * third or more; a long-running server compiles nothing.
 */
const OPTIMIZING_COMPILERS = /::Runtime_Optimize(Turbofan|Maglev)Eager\(/;
/** Requests before counting starts: enough for the hot functions to be optimized (Turbofan). */
const WARM_UP = Number(args['warm-up']);
const FACT_ROWS = 10_000;
const cacheSim = args['cache-sim'];

/**
 * Callgrind's counts per request: instructions (`Ir`) and, with `--cache-sim`, first-level
 * cache misses (instructions `I1mr`; data read and written, `D1mr` + `D1mw`), last-level misses
 * (`ILmr` + `DLmr` + `DLmw`) and mispredicted branches (conditional `Bcm`, indirect `Bim`).
 */
type Counts = Record<string, number>;

/**
 * KCachegrind's cycle estimate: each instruction a cycle, each first-level miss and each
 * mispredicted branch 10, each last-level miss 100. A rough model, the same for every server.
 */
function cycleEstimate(c: Counts): number {
  return (
    sum(c, 'Ir') +
    10 * sum(c, 'I1mr', 'D1mr', 'D1mw', 'Bcm', 'Bim') +
    100 * sum(c, 'ILmr', 'DLmr', 'DLmw')
  );
}

/** The sum of `events` in `c` (0 for an event the dump did not count). */
function sum(c: Counts, ...events: string[]): number {
  return events.reduce((total, event) => total + (c[event] ?? 0), 0);
}

if (spawnSync('valgrind', ['--version'], { stdio: 'ignore' }).error) {
  throw new Error('bench:http-instructions needs valgrind (apt-get install valgrind)');
}

interface Target {
  /** The script and its arguments, run by node under callgrind. */
  args: string[];
  env?: Record<string, string>;
  /** The request paths, taken in turn, and whether they carry the instance's key. */
  paths: string[];
  keyed: boolean;
}

/** Sends `count` GETs over `connections` kept-alive connections; the last body's size. */
async function sendRequests(
  url: URL,
  paths: string[],
  headers: Record<string, string>,
  count: number,
): Promise<number> {
  const agent = new Agent({ keepAlive: true, maxSockets: connections });
  let bodyBytes = 0;
  const get = (path: string) =>
    new Promise<void>((done, fail) => {
      const sent = request({ host: url.hostname, port: url.port, path, headers, agent }, (res) => {
        let bytes = 0;
        res.on('data', (chunk: Buffer) => {
          bytes += chunk.length;
        });
        res.on('end', () => {
          bodyBytes = bytes;
          if (res.statusCode === 200) done();
          else fail(new Error(`${path}: status ${res.statusCode}`));
        });
      });
      sent.on('error', fail);
      sent.end();
    });
  let next = 0;
  try {
    await Promise.all(
      Array.from({ length: connections }, async () => {
        while (next < count) await get(paths[next++ % paths.length] as string);
      }),
    );
  } finally {
    agent.destroy();
  }
  return bodyBytes;
}

/** Runs `callgrind_control` on the server's process (the server keeps running). */
function control(pid: number, ...options: string[]): void {
  const result = spawnSync('callgrind_control', [...options, String(pid)], { encoding: 'utf8' });
  if (result.status !== 0)
    throw new Error(`callgrind_control ${options.join(' ')}: ${result.stderr}`);
}

/**
 * The main thread's counts in the dump file `name` (one per thread: main's ends in -01), less
 * what V8's optimizing compilers counted.
 */
function dumped(folder: string, out: string, dump: number): Counts {
  const name = readdirSync(folder).find(
    (file) => join(folder, file).startsWith(`${out}.${dump}`) && file.endsWith('-01'),
  );
  if (!name) throw new Error(`callgrind wrote no main-thread dump ${dump} for ${out}`);
  const text = readFileSync(join(folder, name), 'utf8');
  const events = /^events: (.+)$/m.exec(text)?.[1]?.split(' ');
  const summary = /^summary: (.+)$/m.exec(text)?.[1]?.split(' ').map(Number);
  if (!events || !summary) throw new Error(`no events or summary in ${name}`);
  const compiled = compiling(join(folder, name), events.length);
  return Object.fromEntries(
    events.map((event, i) => [event, (summary[i] ?? 0) - (compiled[i] ?? 0)]),
  );
}

/**
 * Each event's inclusive count in V8's optimizing compilers (`OPTIMIZING_COMPILERS`) in a dump
 * of `columns` events, as `callgrind_annotate` prints them (`1,234 (0.1%)` a column).
 */
function compiling(file: string, columns: number): number[] {
  const result = spawnSync('callgrind_annotate', ['--inclusive=yes', '--threshold=100', file], {
    encoding: 'utf8',
    maxBuffer: 256 * 1024 * 1024,
  });
  if (result.status !== 0) throw new Error(`callgrind_annotate ${file}: ${result.stderr}`);
  const counts = new Array<number>(columns).fill(0);
  for (const line of result.stdout.split('\n')) {
    if (!OPTIMIZING_COMPILERS.test(line)) continue;
    const numbers = line.replace(/\(\s*[\d.]+%\)/g, '').match(/^\s*(?:[\d,]+\s+)+/)?.[0];
    const values = numbers?.trim().split(/\s+/) ?? [];
    for (let i = 0; i < columns && i < values.length; i++)
      counts[i] = (counts[i] ?? 0) + Number((values[i] as string).replaceAll(',', ''));
  }
  return counts;
}

/**
 * Instructions per request of `target`: one run under callgrind, counting nothing until warmed
 * up, then two counted windows, of `requests` and five times as many; their difference per
 * request cancels what a window costs whatever its length (the dumps, the first requests).
 */
async function perRequest(
  target: Target,
  folder: string,
): Promise<{ counts: Counts; bodyBytes: number }> {
  const out = join(folder, `callgrind.${Math.random().toString(36).slice(2)}`);
  const started = performance.now();
  const server = await startChildServer(
    'valgrind',
    [
      '--tool=callgrind',
      '--smc-check=all-non-file',
      '--separate-threads=yes',
      '--instr-atstart=no',
      ...(cacheSim ? ['--cache-sim=yes', '--branch-sim=yes'] : []),
      `--callgrind-out-file=${out}`,
      process.execPath,
      ...(args.keep ? ['--perf-basic-prof'] : []),
      '--single-threaded',
      '--predictable',
      ...target.args,
    ],
    target.env,
    { readyTimeoutMs: 600_000, stopTimeoutMs: 120_000 },
  );
  try {
    const headers: Record<string, string> = target.keyed
      ? { authorization: `Bearer ${String(server.ready.apiKey)}` }
      : {};
    const url = new URL(server.url);
    await sendRequests(url, target.paths, headers, WARM_UP);
    control(server.pid, '--instr=on');
    control(server.pid, '--zero');
    const bodyBytes = await sendRequests(url, target.paths, headers, requests);
    control(server.pid, '--dump=few');
    await sendRequests(url, target.paths, headers, 5 * requests);
    control(server.pid, '--dump=many');
    const few = dumped(folder, out, 1);
    const many = dumped(folder, out, 2);
    const seconds = ((performance.now() - started) / 1000).toFixed(0);
    process.stderr.write(`  counted in ${seconds} s\n`);
    if (args.keep)
      process.stderr.write(`  kept: ${out}.2-01, JIT code in /tmp/perf-${server.pid}.map\n`);
    const counts = Object.fromEntries(
      Object.entries(many).map(([event, n]) => [event, (n - (few[event] ?? 0)) / (4 * requests)]),
    );
    return { counts, bodyBytes };
  } finally {
    await server.stop();
  }
}

const here = resolve(fileURLToPath(new URL('..', import.meta.url)));
const servers = await startTestServers();
const folder = args.keep
  ? resolve(args.keep)
  : mkdtempSync(join(tmpdir(), 'replix-http-instructions-'));
if (args.keep) mkdirSync(folder, { recursive: true });
try {
  process.stderr.write(`dataset: ${FACT_ROWS} fact rows…\n`);
  const dataset = await createBenchDataset(mariaDbAdmin(servers.mariadb.url), {
    factRows: FACT_ROWS,
    dimRows: FACT_ROWS / 10,
  });
  // bench:http's ids and query.
  const paths = Array.from({ length: 200 }, (_, i) => {
    const id = 1 + ((i * 4999) % FACT_ROWS);
    return `/query?q=${encodeURIComponent(`fact (id = ${id}) { id qty amount }`)}`;
  });
  const instance = (checkout: string): Target => ({
    args: [
      join(checkout, 'packages/cli/bin/replix.js'),
      'serve',
      '--source',
      dataset.database.url,
      '--port',
      '0',
    ],
    env: { REPLIX_LOG_LEVEL: 'warn', REPLIX_THREADS: '1' },
    paths,
    keyed: true,
  });
  const checkouts: Array<[string, string]> = [['Replix instance, 1 thread', here]];
  if (args.before) checkouts.push([`the same, before: ${args.before}`, resolve(args.before)]);
  const counted: Array<[string, Counts]> = [];
  let bodyBytes = 0;
  for (const [name, checkout] of checkouts) {
    process.stderr.write(`counting ${name}…\n`);
    const result = await perRequest(instance(checkout), folder);
    bodyBytes ||= result.bodyBytes;
    counted.push([name, result.counts]);
  }
  const fixed = (script: string): Target => ({
    args: [join(here, 'bench/lib', script), '--bytes', String(bodyBytes), '--port', '0'],
    paths: ['/'],
    keyed: false,
  });
  process.stderr.write('counting B and F…\n');
  const bare = (await perRequest(fixed('fixed-body-server.ts'), folder)).counts;
  const fastify = (await perRequest(fixed('fastify-fixed-server.ts'), folder)).counts;
  counted.push(['B: bare node:http', bare], ['F: one-route Fastify', fastify]);
  const ir = (c: Counts) => c.Ir ?? Number.NaN;
  printTable(
    `Main-thread instructions per PK-lookup request (callgrind; ${requests} vs ${5 * requests} requests after ${WARM_UP} to warm up, ${connections} connections; body ${bodyBytes} bytes; node --single-threaded --predictable)`,
    counted.map(([server, each]) => ({
      server,
      'instructions per request': Math.round(ir(each)),
      '÷ F': (ir(each) / ir(fastify)).toFixed(2),
      '÷ B': (ir(each) / ir(bare)).toFixed(2),
    })),
  );
  if (cacheSim) {
    printTable(
      'Simulated caches and branch predictors per request (callgrind --cache-sim --branch-sim; CEst = Ir + 10 × (first-level misses + mispredicts) + 100 × last-level misses)',
      counted.map(([server, each]) => ({
        server,
        'I1 misses': Math.round(sum(each, 'I1mr')),
        'D1 misses': Math.round(sum(each, 'D1mr', 'D1mw')),
        'LL misses': Math.round(sum(each, 'ILmr', 'DLmr', 'DLmw')),
        mispredicts: Math.round(sum(each, 'Bcm', 'Bim')),
        CEst: Math.round(cycleEstimate(each)),
        'CEst ÷ F': (cycleEstimate(each) / cycleEstimate(fastify)).toFixed(2),
        'CEst ÷ B': (cycleEstimate(each) / cycleEstimate(bare)).toFixed(2),
      })),
    );
  }
} finally {
  if (!args.keep) rmSync(folder, { recursive: true, force: true });
  await servers.stop();
}
