/**
 * `npm run bench:engine`: the instance against baselines measured in the same run, on real
 * MariaDB (issue 17, "Benchmark"). Prints tables of ratios and, last, every goal with its figure.
 *
 *   A = a Fastify + mysql2 server answering the same SQL (bench/lib/sql-baseline-server.ts)
 *   B = a bare node:http server returning a fixed body of Replix's size (fixed-body-server.ts)
 *
 * The instance runs twice: with 1 thread and with N (`--threads`, 2 by default). When the
 * machine has wrk (`apt-get install wrk`), taskset and 2 CPUs, the load comes from wrk on CPU 1
 * and each system answering is pinned to CPU 0 while it is measured, as bench:http measures:
 * the 1-thread instance alone, A with the MariaDB it asks, B alone; the N-thread instance shares
 * every CPU with wrk, so its figure is a floor, not what N dedicated cores give. Else the load
 * comes from autocannon in this process, sharing the cores with every server: a fast server's
 * figure is then capped by the load generator's own CPU, and its ratios to A read low and
 * spread wide (the embed's read 2.2 to 4.1 in one day). The engine time under load is sampled
 * the same way.
 *
 * The snapshot load is measured against mysql2 streaming the same rows in `--load-rounds`
 * alternating rounds, each run in a fresh process (bench/lib/load-rounds.ts, as bench:load); the
 * ratio is the median of the rounds'. The generation the scenarios query is loaded once more, in
 * this process.
 *
 *   node --expose-gc bench/engine.ts [--fact-rows N] [--dim-rows N] [--seconds S]
 *     [--connections C] [--threads N] [--load-rounds R]
 */
import { readFileSync } from 'node:fs';
import { join } from 'node:path';
import { fileURLToPath } from 'node:url';
import { parseArgs } from 'node:util';
import {
  compileSchema,
  type Generation,
  nextGeneration,
  parseSchemaConfig,
  type RowChange,
} from '@replix/engine';
import { loadSnapshot, sourceColumnsOf } from '@replix/instance';
import { INSTANCE_MALLOC_ENVIRONMENT } from '@replix/instance-protocol';
import { connectorFromUrl } from '@replix/sources';
import { mariaDbAdmin, startTestServers } from '@replix/testkit';
import { mulberry32 } from '@replix/testkit/mulberry32';
import { type ChildServer, startChildServer } from './lib/child-server.ts';
import {
  CATEGORIES,
  createBenchDataset,
  MIN_MAX_DISTINCT,
  MIN_MAX_DISTINCT_SQL,
} from './lib/dataset.ts';
import { DuckDbBaseline, FACT_COLUMNS } from './lib/duckdb-baseline.ts';
import { measureThroughput, type ThroughputResult } from './lib/http-load.ts';
import { measureLoadRounds, medianRoundRatio } from './lib/load-rounds.ts';
import { printTable } from './lib/report.ts';
import {
  allCpus,
  LOAD_CPU,
  pinToCpu,
  runWrk,
  SERVER_CPU,
  wrkThroughput,
  wrkUsable,
} from './lib/wrk-load.ts';

const { values: args } = parseArgs({
  options: {
    'fact-rows': { type: 'string', default: '1000000' },
    'dim-rows': { type: 'string', default: '100000' },
    seconds: { type: 'string', default: '5' },
    connections: { type: 'string', default: '16' },
    threads: { type: 'string', default: '2' },
    'load-rounds': { type: 'string', default: '3' },
  },
});
const factRows = Number(args['fact-rows']);
const dimRows = Number(args['dim-rows']);
const seconds = Number(args.seconds);
const connections = Number(args.connections);
const threads = Number(args.threads);
/** The load from wrk on CPU 1, each system measured on CPU 0, when the machine allows it. */
const underLoadWithWrk = wrkUsable();
const gc = (globalThis as { gc?: () => void }).gc;
if (!gc) throw new Error('run with node --expose-gc (npm run bench:engine does)');

const replixBin = fileURLToPath(new URL('../packages/cli/bin/replix.js', import.meta.url));
const sqlServer = fileURLToPath(new URL('./lib/sql-baseline-server.ts', import.meta.url));
const fixedServer = fileURLToPath(new URL('./lib/fixed-body-server.ts', import.meta.url));

function median(values: number[]): number {
  const sorted = [...values].sort((a, b) => a - b);
  return sorted[Math.floor(sorted.length / 2)] ?? Number.NaN;
}

function heapBytes(): number {
  gc?.();
  gc?.();
  const usage = process.memoryUsage();
  return usage.heapUsed + usage.arrayBuffers;
}

/** A child's resident memory (Linux `VmRSS`), in bytes. */
function residentBytes(pid: number): number {
  const match = /VmRSS:\s+(\d+) kB/.exec(readFileSync(`/proc/${pid}/status`, 'utf8'));
  return match ? Number(match[1]) * 1024 : Number.NaN;
}

/**
 * Each child's resident memory once it has settled: read every second until no figure moved by
 * 1 MB for three readings in a row (at most 30 s). V8 gives pages back a few seconds after a
 * burst of allocation ends, so a server read just after its last load shows that load's
 * garbage, and one idle for a while does not: read at once, the instance measured last counted
 * up to 160 MB more.
 */
async function settledResidentBytes(pids: readonly number[]): Promise<number[]> {
  let last = pids.map(residentBytes);
  let steady = 0;
  for (let second = 0; second < 30 && steady < 3; second++) {
    await new Promise((resolve) => setTimeout(resolve, 1000));
    const now = pids.map(residentBytes);
    steady = now.every((bytes, i) => Math.abs(bytes - (last[i] ?? 0)) < 1e6) ? steady + 1 : 0;
    last = now;
  }
  return last;
}

/** (g)'s DECIMAL filter: about 1% of the prices (0.00 … 99999.99) are above it. */
const PRICE_FLOOR = '99000.50';

const fmt = (n: number, digits = 2) => n.toFixed(digits);
const log = (message: string) => process.stderr.write(`${message}\n`);

/** One line of the closing goals table. */
interface Goal {
  goal: string;
  measured: number;
  /** `atLeast`: measured >= target; `atMost`: measured <= target. */
  sense: 'atLeast' | 'atMost';
  target: number;
}
const goals: Goal[] = [];
const goal = (name: string, measured: number, sense: Goal['sense'], target: number) =>
  goals.push({ goal: name, measured, sense, target });

const servers = await startTestServers();
const children: ChildServer[] = [];
try {
  log(`dataset: ${factRows} fact rows, ${dimRows} dim rows…`);
  const dataset = await createBenchDataset(mariaDbAdmin(servers.mariadb.url), {
    factRows,
    dimRows,
  });
  const url = dataset.database.url;

  // 1. Load: the engine's snapshot load against mysql2 streaming the same rows to nowhere.
  log(`snapshot load against the mysql2 stream, ${args['load-rounds']} rounds…`);
  const loadRounds = await measureLoadRounds(url, {
    rounds: Number(args['load-rounds']),
    threadCounts: [1],
    onRound: (round, streamed, [loaded]) =>
      log(
        `  round ${round + 1}: stream ${fmt(streamed.ms, 0)} ms, load ${fmt(loaded?.ms ?? Number.NaN, 0)} ms`,
      ),
  });
  const streamMs = median(loadRounds.stream.map((timed) => timed.ms));
  const loadMs = median(loadRounds.loads[0]?.map((timed) => timed.ms) ?? []);
  const loadRatio = medianRoundRatio(loadRounds, 0, (timed) => timed.ms);
  // The generation the scenarios query, and what it holds on the heap.
  const connector = connectorFromUrl(url);
  const schema = compileSchema(await connector.introspect(), parseSchemaConfig({}));
  const before = heapBytes();
  let generation: Generation = (await loadSnapshot(connector, schema, 1, () => {})).generation;
  const snapshotHeap = heapBytes() - before;

  // DuckDB on one thread over the same fact rows, as the connector delivers them.
  log('loading the fact table into DuckDB…');
  const duck = await DuckDbBaseline.open();
  {
    const factRowsRead: unknown[][] = [];
    const reader = await connector.openSnapshot({ withPosition: false, tables: ['fact'] });
    try {
      const fact = schema.tablesByName.get('fact');
      if (!fact) throw new Error('no fact table');
      for await (const batch of reader.readTable({
        table: fact.sourceName,
        columns: sourceColumnsOf(fact),
        where: fact.where,
      }))
        for (const row of batch) factRowsRead.push(row as unknown[]);
    } finally {
      await reader.close();
    }
    await duck.loadTable('fact', FACT_COLUMNS, factRowsRead);
  }
  await connector.close();
  const duckTimes = async (sqls: string[]) => {
    for (const sql of sqls) await duck.timeOnce(sql);
    const times: number[] = [];
    for (let i = 0; i < 60; i++) times.push(await duck.timeOnce(sqls[i % sqls.length] as string));
    return median(times);
  };
  const duckMs = new Map([
    [
      'b',
      await duckTimes(
        CATEGORIES.map(
          (c) => `SELECT * FROM fact WHERE category = '${c}' ORDER BY amount DESC, id LIMIT 50`,
        ),
      ),
    ],
    ['c', await duckTimes(['SELECT status, COUNT(*), SUM(qty) FROM fact GROUP BY status'])],
    [
      'e',
      await duckTimes(
        CATEGORIES.map(
          (c) => `SELECT * FROM fact WHERE category = '${c}' ORDER BY price DESC, id LIMIT 50`,
        ),
      ),
    ],
    ['f', await duckTimes(['SELECT status, COUNT(*), SUM(price) FROM fact GROUP BY status'])],
    ['g', await duckTimes([`SELECT COUNT(*), AVG(price) FROM fact WHERE price > ${PRICE_FLOOR}`])],
    ['h', await duckTimes([MIN_MAX_DISTINCT_SQL])],
  ]);
  duck.close();

  // 2. Generation cost: 1,000 row changes on the fact table (updates, inserts, deletes).
  const random = mulberry32(7);
  const generationMs: number[] = [];
  let nextFactId = factRows + 1;
  for (let round = 0; round < 7; round++) {
    const changes: RowChange[] = [];
    for (let i = 0; i < 1000; i++) {
      const id = 1 + Math.floor(random() * factRows);
      const row = [
        String(id),
        1 + (id % dimRows),
        round,
        '1',
        1.5,
        '2.50',
        'cat_01',
        'paid',
        null,
        '2024-01-01',
        1_700_000_000_000,
        null,
      ];
      if (i % 10 === 0)
        changes.push({ op: 'insert', row: [String(nextFactId++), ...row.slice(1)] });
      else if (i % 10 === 1) changes.push({ op: 'delete', row });
      else changes.push({ op: 'update', before: row, after: row });
    }
    const started = performance.now();
    generation = nextGeneration(generation, new Map([['fact', changes]]), round + 2);
    generationMs.push(performance.now() - started);
  }

  // 3. The servers: the instance on 1 thread and on N, and baseline A.
  log('starting the servers…');
  const startReplix = async (threadCount: number) => {
    const child = await startChildServer(
      process.execPath,
      [replixBin, 'serve', '--source', url, '--port', '0'],
      // Started as the drivers start an instance (launchEnvironment): malloc on huge pages.
      {
        REPLIX_LOG_LEVEL: 'warn',
        REPLIX_THREADS: String(threadCount),
        ...INSTANCE_MALLOC_ENVIRONMENT,
      },
      { readyTimeoutMs: 300_000 },
    );
    children.push(child);
    return child;
  };
  const single = await startReplix(1);
  const multi = await startReplix(threads);
  const sql = await startChildServer(process.execPath, [sqlServer, '--url', url, '--port', '0']);
  children.push(sql);
  const authOf = (child: ChildServer) => ({
    Authorization: `Bearer ${String(child.ready.apiKey)}`,
  });
  const ids = Array.from({ length: 200 }, (_, i) => 1 + ((i * 4999) % factRows));
  const dimIds = ids.map((id) => 1 + (id % dimRows));
  const q = (text: string) => `/query?q=${encodeURIComponent(text)}`;
  const scenarios = [
    {
      key: 'a',
      name: '(a) PK lookup, 3 fields',
      replix: ids.map((id) => q(`fact (id = ${id}) { id qty amount }`)),
      sql: ids.map((id) => `/a?id=${id}`),
      goalVsA: 3,
      goalVsB: 0.8,
    },
    {
      key: 'b',
      name: '(b) filter + ORDER BY + LIMIT 50',
      replix: CATEGORIES.map((c) =>
        q(`fact (category = '${c}') { * } ORDER BY amount DESC LIMIT 50`),
      ),
      sql: CATEGORIES.map((c) => `/b?category=${c}`),
      goalVsA: 5,
    },
    {
      key: 'c',
      name: '(c) COUNT/SUM by status, 1M rows',
      replix: [q('fact { status COUNT(*) SUM(qty) }')],
      sql: ['/c'],
      goalVsA: 5,
    },
    {
      key: 'e',
      name: '(e) filter + ORDER BY DECIMAL + LIMIT 50',
      replix: CATEGORIES.map((c) =>
        q(`fact (category = '${c}') { * } ORDER BY price DESC LIMIT 50`),
      ),
      sql: CATEGORIES.map((c) => `/e?category=${c}`),
      goalVsA: 5,
    },
    {
      key: 'f',
      name: '(f) COUNT/SUM(DECIMAL) by status, 1M rows',
      replix: [q('fact { status COUNT(*) SUM(price) }')],
      sql: ['/f'],
      goalVsA: 5,
    },
    {
      key: 'g',
      name: '(g) DECIMAL filter + COUNT/AVG',
      replix: [q(`fact (price > ${PRICE_FLOOR}) { COUNT(*) AVG(price) }`)],
      sql: [`/g?floor=${PRICE_FLOOR}`],
      goalVsA: 5,
    },
    {
      key: 'h',
      name: '(h) MIN/MAX/COUNT(DISTINCT) by status, 1M rows',
      replix: [q(MIN_MAX_DISTINCT)],
      sql: ['/h'],
      goalVsA: 5,
    },
    {
      key: 'd',
      name: '(d) parent + 10 children embedded',
      replix: dimIds.map((id) => q(`dim (id = ${id}) { * fact { * } }`)),
      sql: dimIds.map((id) => `/d?id=${id}`),
      goalVsA: 5,
    },
  ];

  /**
   * `meta.timing_ms` of sequential requests sent while 2 s of load run on `child`, in a run of
   * its own so the sampler's requests take nothing from the req/s figures. With wrk (2 CPUs,
   * `apt-get install wrk`) the instance runs on CPU 0 and wrk and the sampler on CPU 1, as in
   * bench:http: with autocannon in this process, load generator and instance share both cores,
   * and a lookup's few microseconds count the scheduler's preemptions and migrations (one
   * build read 6 µs so, 1 to 2 µs pinned). Without wrk, autocannon.
   */
  async function timingsUnderLoad(child: ChildServer, paths: string[]): Promise<number[]> {
    return pinnedApart(child, async () => {
      const timings: number[] = [];
      let loadDone = false;
      const loadRun = (
        underLoadWithWrk
          ? runWrk({
              url: child.url,
              paths,
              headers: authOf(child),
              connections,
              durationSeconds: 2,
              cpu: LOAD_CPU,
            })
          : measureThroughput({
              url: child.url,
              paths,
              headers: authOf(child),
              ...load,
              durationSeconds: 2,
              warmupSeconds: 0,
            })
      ).finally(() => {
        loadDone = true;
      });
      while (!loadDone) timings.push(await timingOf(child, paths[timings.length % paths.length]));
      await loadRun;
      return timings;
    });
  }

  /** `meta.timing_ms` of one request for `path`. */
  async function timingOf(child: ChildServer, path: string | undefined): Promise<number> {
    const response = await fetch(child.url + path, { headers: authOf(child) });
    const body = (await response.json()) as { meta: { timing_ms: number } };
    return body.meta.timing_ms;
  }

  /**
   * Runs `measure` with `child` on CPU 0 and this process (the sampler, and wrk it starts) on
   * CPU 1 when the machine allows it, as a client on another machine would be: on a shared core
   * the client's own work between two requests evicts the instance's code and data from the
   * core's caches, and the engine time then counts the client's footprint.
   */
  async function pinnedApart<T>(child: ChildServer, measure: () => Promise<T>): Promise<T> {
    if (underLoadWithWrk) {
      pinToCpu(child.pid, SERVER_CPU);
      pinToCpu(process.pid, LOAD_CPU);
    }
    try {
      return await measure();
    } finally {
      if (underLoadWithWrk) {
        pinToCpu(child.pid, allCpus());
        pinToCpu(process.pid, allCpus());
      }
    }
  }

  const rows: Record<string, string | number>[] = [];
  const timingRows: Record<string, string | number>[] = [];
  const engineMs = new Map<string, number>();
  const load = { connections, durationSeconds: seconds, warmupSeconds: 1 };
  const mariaDbPid = Number(readFileSync(join(servers.mariadb.dir, 'mysqld.pid'), 'utf8'));
  /**
   * Req/s of `url` over `paths`: with wrk, the `pinned` processes on CPU 0 for the run (the
   * system answering; none for the N-thread instance, which needs every CPU); else autocannon.
   */
  const throughput = (
    target: { url: string; paths: string[]; headers?: Record<string, string> },
    pinned: readonly number[],
  ) =>
    underLoadWithWrk
      ? wrkThroughput({ ...target, ...load }, pinned)
      : measureThroughput({ ...target, ...load });
  const replixTarget = (child: ChildServer, paths: string[]) => ({
    url: child.url,
    paths,
    headers: authOf(child),
  });
  for (const scenario of scenarios) {
    log(`measuring ${scenario.name}…`);
    const one = await throughput(replixTarget(single, scenario.replix), [single.pid]);
    // Engine time: meta.timing_ms over sequential requests, after the throughput run, so the
    // figure is a long-running server's (as bench:http's are): measured first, before V8 had
    // optimized the path, a PK lookup read 100 µs, most of it the interpreter's. The client on
    // a CPU of its own (`pinnedApart`). An idle instance's lookups still run cold: on this VM a
    // thread that slept 1 ms runs the same lookup in 6 µs instead of 1, and after 10 ms in 37.
    const timings = await pinnedApart(single, async () => {
      const sequential: number[] = [];
      for (let i = 0; i < 60; i++)
        sequential.push(await timingOf(single, scenario.replix[i % scenario.replix.length]));
      return sequential;
    });
    const ours = median(timings);
    engineMs.set(scenario.key, ours);
    const duckdb = duckMs.get(scenario.key);
    // The same figure under load: sampled by one client beside the load generator.
    const loaded = await timingsUnderLoad(single, scenario.replix);
    const oursLoaded = median(loaded);
    timingRows.push({
      scenario: scenario.name,
      'replix ms, idle': fmt(ours, 3),
      'replix ms, under load': fmt(oursLoaded, 3),
      'duckdb ms': duckdb === undefined ? '-' : fmt(duckdb, 3),
      'replix / duckdb': duckdb === undefined ? '-' : fmt(ours / duckdb),
    });
    if (duckdb !== undefined)
      goal(`${scenario.name}: engine time / DuckDB (1 thread)`, ours / duckdb, 'atMost', 1);

    const many = await throughput(replixTarget(multi, scenario.replix), []);
    const theirs = await throughput({ url: sql.url, paths: scenario.sql }, [sql.pid, mariaDbPid]);
    const fixed = await startChildServer(process.execPath, [
      fixedServer,
      '--bytes',
      String(Math.round(one.bodyBytes)),
      '--port',
      '0',
    ]);
    let bare: ThroughputResult;
    try {
      bare = await throughput({ url: fixed.url, paths: ['/'] }, [fixed.pid]);
    } finally {
      await fixed.stop();
    }
    if (scenario.key === 'a') {
      goal('(a) PK lookup: engine time under load (µs)', oursLoaded * 1000, 'atMost', 5);
      goal('(a) PK lookup: engine time, idle sequential requests (µs)', ours * 1000, 'atMost', 5);
    }
    // A that answered nothing in the run (a whole-table GROUP BY on one core with 16 queries
    // at once can take longer) answered under one query per run: the ratio is at least this.
    const aAnswered = theirs.requestsPerSecond > 0;
    const vsA = one.requestsPerSecond / (aAnswered ? theirs.requestsPerSecond : 1 / seconds);
    const vsB = one.requestsPerSecond / bare.requestsPerSecond;
    const scaling = many.requestsPerSecond / one.requestsPerSecond;
    rows.push({
      scenario: scenario.name,
      'replix 1 thread': fmt(one.requestsPerSecond, 1),
      [`replix ${threads} threads`]: fmt(many.requestsPerSecond, 1),
      'A req/s': fmt(theirs.requestsPerSecond, 1),
      'B req/s': fmt(bare.requestsPerSecond, 0),
      '1 thread / A': aAnswered ? fmt(vsA) : `> ${fmt(vsA)}`,
      '1 thread / B': fmt(vsB),
      [`${threads} / 1 thread`]: fmt(scaling),
      'p99 ms (1 thread)': fmt(one.p99Ms),
      'non-2xx': one.non2xx + many.non2xx + theirs.non2xx + bare.non2xx,
    });
    goal(
      `${scenario.name}: 1 thread / A${aAnswered ? '' : ' (A answered none in the run: more)'}`,
      vsA,
      'atLeast',
      scenario.goalVsA,
    );
    if (scenario.goalVsB !== undefined)
      goal(`${scenario.name}: 1 thread / B`, vsB, 'atLeast', scenario.goalVsB);
  }

  // 4. Memory of the instance with N threads against 1, both warm (every scenario has run) and
  // both settled after their last load.
  gc?.();
  const [singleRss = Number.NaN, multiRss = Number.NaN] = await settledResidentBytes([
    single.pid,
    multi.pid,
  ]);

  const memoryRatio = snapshotHeap / dataset.csvBytes;
  const threadMemoryRatio = multiRss / singleRss;
  goal('snapshot load / mysql2 stream', loadRatio, 'atMost', 1.2);
  goal(`resident memory, ${threads} threads / 1 thread`, threadMemoryRatio, 'atMost', 1.2);
  printTable('Load and memory', [
    {
      measure: `snapshot load (median ms of ${loadRounds.stream.length}; ratio: the rounds' median)`,
      replix: fmt(loadMs, 0),
      baseline: `${fmt(streamMs, 0)} (mysql2 stream)`,
      ratio: fmt(loadRatio),
    },
    {
      measure: 'snapshot bytes after GC',
      replix: `${fmt(snapshotHeap / 1e6, 1)} MB`,
      baseline: `${fmt(dataset.csvBytes / 1e6, 1)} MB (data as CSV)`,
      ratio: fmt(memoryRatio),
    },
    {
      measure: 'engine-counted snapshot bytes',
      replix: `${fmt(generation.byteSize() / 1e6, 1)} MB`,
      baseline: `${fmt(dataset.csvBytes / 1e6, 1)} MB (data as CSV)`,
      ratio: fmt(generation.byteSize() / dataset.csvBytes),
    },
    {
      measure: `instance resident memory, ${threads} threads`,
      replix: `${fmt(multiRss / 1e6, 1)} MB`,
      baseline: `${fmt(singleRss / 1e6, 1)} MB (1 thread)`,
      ratio: fmt(threadMemoryRatio),
    },
    {
      // What each thread beside the main one adds: its own V8 heap and native memory; the
      // snapshot's arrays are shared, not copied (storage/shared-arrays.ts).
      measure: 'resident memory per extra query thread',
      replix: `${fmt((multiRss - singleRss) / Math.max(1, threads - 1) / 1e6, 1)} MB`,
      baseline: `${fmt(singleRss / 1e6, 1)} MB (1 thread)`,
      ratio: fmt((multiRss - singleRss) / Math.max(1, threads - 1) / singleRss),
    },
    {
      measure: 'next generation after 1,000 changes (median ms)',
      replix: fmt(median(generationMs)),
      baseline: '-',
      ratio: '-',
    },
  ]);
  printTable(
    `HTTP throughput, req/s (${connections} connections, the same settings for every server; ${underLoadWithWrk ? `wrk on CPU 1, each system answering pinned to CPU 0 (A with its MariaDB), the ${threads}-thread instance on every CPU` : "autocannon in this process, sharing the machine's cores"})`,
    rows,
  );
  printTable(
    `Engine time per query, median ms (Replix: meta.timing_ms, parse to JSON written; under load: ${underLoadWithWrk ? 'wrk and the sampler on CPU 1, the instance on CPU 0' : 'autocannon in this process'}; DuckDB: one thread, the same rows, result read into JS)`,
    timingRows,
  );
  printTable(
    'Goals (issue 17)',
    goals.map((g) => ({
      goal: g.goal,
      measured: fmt(g.measured),
      target: `${g.sense === 'atLeast' ? '>=' : '<='} ${g.target}`,
      met: (g.sense === 'atLeast' ? g.measured >= g.target : g.measured <= g.target) ? 'yes' : 'NO',
    })),
  );
} finally {
  for (const child of children) await child.stop().catch(() => {});
  await servers.stop();
}
