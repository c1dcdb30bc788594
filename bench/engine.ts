/**
 * `npm run bench:engine`: the instance engine against baselines measured in the same run, on
 * real MariaDB (issue: instance engine, "Performance"). Prints a table of ratios.
 *
 *   node --expose-gc bench/engine.ts [--fact-rows N] [--dim-rows N] [--seconds S]
 */
import { fileURLToPath } from 'node:url';
import { parseArgs } from 'node:util';
import {
  compileSchema,
  type Generation,
  nextGeneration,
  parseSchemaConfig,
  type RowChange,
} from '@replix/engine';
import { loadSnapshot } from '@replix/instance';
import { connectorFromUrl } from '@replix/sources';
import { mariaDbAdmin, startTestServers } from '@replix/testkit';
import { startChildServer } from './lib/child-server.ts';
import { CATEGORIES, createBenchDataset } from './lib/dataset.ts';
import { measureThroughput } from './lib/http-load.ts';
import { mulberry32 } from './lib/mulberry32.ts';
import { timeMysqlStream } from './lib/mysql-stream-baseline.ts';
import { printTable } from './lib/report.ts';

const { values: args } = parseArgs({
  options: {
    'fact-rows': { type: 'string', default: '1000000' },
    'dim-rows': { type: 'string', default: '100000' },
    seconds: { type: 'string', default: '5' },
  },
});
const factRows = Number(args['fact-rows']);
const dimRows = Number(args['dim-rows']);
const seconds = Number(args.seconds);
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

const fmt = (n: number, digits = 2) => n.toFixed(digits);
const log = (message: string) => process.stderr.write(`${message}\n`);

const servers = await startTestServers();
const children: { stop(): Promise<void> }[] = [];
try {
  log(`dataset: ${factRows} fact rows, ${dimRows} dim rows…`);
  const dataset = await createBenchDataset(mariaDbAdmin(servers.mariadb.url), {
    factRows,
    dimRows,
  });
  const url = dataset.database.url;

  // 1. Load: the engine's snapshot load against mysql2 streaming the same rows to nowhere.
  const stream = await timeMysqlStream(url, ['dim', 'fact']);
  const connector = connectorFromUrl(url);
  const schema = compileSchema(await connector.introspect(), parseSchemaConfig({}));
  const before = heapBytes();
  const loadStarted = performance.now();
  let generation: Generation = (await loadSnapshot(connector, schema, 1, () => {})).generation;
  const loadMs = performance.now() - loadStarted;
  const snapshotHeap = heapBytes() - before;
  await connector.close();

  // 5. Generation cost: 1,000 row changes on the fact table (updates, inserts, deletes).
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

  // 3. Throughput over HTTP, the same client settings for every server.
  log('starting the servers…');
  const replix = await startChildServer(
    process.execPath,
    [replixBin, 'serve', '--source', url, '--port', '0'],
    { REPLIX_LOG_LEVEL: 'warn' },
    { readyTimeoutMs: 300_000 },
  );
  children.push(replix);
  const sql = await startChildServer(process.execPath, [sqlServer, '--url', url, '--port', '0']);
  children.push(sql);
  const auth = { Authorization: `Bearer ${String(replix.ready.apiKey)}` };
  const ids = Array.from({ length: 200 }, (_, i) => 1 + ((i * 4999) % factRows));
  const dimIds = ids.map((id) => 1 + (id % dimRows));
  const q = (text: string) => `/query?q=${encodeURIComponent(text)}`;
  const scenarios = [
    {
      name: '(a) PK lookup, 3 fields',
      replix: ids.map((id) => q(`fact (id = ${id}) { id qty amount }`)),
      sql: ids.map((id) => `/a?id=${id}`),
      goals: { sql: 3, fixed: 0.6 },
      timingGoal: 0.05,
    },
    {
      name: '(b) filter + ORDER BY + LIMIT 50',
      replix: CATEGORIES.map((c) =>
        q(`fact (category = '${c}') { * } ORDER BY amount DESC LIMIT 50`),
      ),
      sql: CATEGORIES.map((c) => `/b?category=${c}`),
      goals: { sql: 5 },
      timingGoal: 20,
    },
    {
      name: '(c) COUNT/SUM by status, whole table',
      replix: [q('fact { status COUNT(*) SUM(qty) }')],
      sql: ['/c'],
      goals: { sql: 5 },
      timingGoal: 40,
    },
    {
      name: '(d) parent + 10 children',
      replix: dimIds.map((id) => q(`dim (id = ${id}) { * fact { * } }`)),
      sql: dimIds.map((id) => `/d?id=${id}`),
      goals: { sql: 5 },
      timingGoal: undefined,
    },
  ];

  const rows: Record<string, string | number>[] = [];
  const timingRows: Record<string, string | number>[] = [];
  for (const scenario of scenarios) {
    log(`measuring ${scenario.name}…`);
    // Server-side timing: meta.timing_ms over sequential requests, after one warm-up pass
    // (the first run of a query text also parses and plans it).
    for (const path of scenario.replix)
      await (await fetch(replix.url + path, { headers: auth })).text();
    const timings: number[] = [];
    for (let i = 0; i < 60; i++) {
      const path = scenario.replix[i % scenario.replix.length] as string;
      const body = (await (await fetch(replix.url + path, { headers: auth })).json()) as {
        meta: { timing_ms: number };
      };
      timings.push(body.meta.timing_ms);
    }
    timingRows.push({
      scenario: scenario.name,
      'median timing_ms': fmt(median(timings), 3),
      goal: scenario.timingGoal === undefined ? '-' : `<= ${scenario.timingGoal}`,
      met:
        scenario.timingGoal === undefined
          ? '-'
          : median(timings) <= scenario.timingGoal
            ? 'yes'
            : 'NO',
    });
    const load = { connections: 10, durationSeconds: seconds, warmupSeconds: 1 };
    const ours = await measureThroughput({
      url: replix.url,
      paths: scenario.replix,
      headers: auth,
      ...load,
    });
    const theirs = await measureThroughput({ url: sql.url, paths: scenario.sql, ...load });
    const fixed = await startChildServer(process.execPath, [
      fixedServer,
      '--bytes',
      String(Math.round(ours.bodyBytes)),
      '--port',
      '0',
    ]);
    const bare = await measureThroughput({ url: fixed.url, paths: ['/'], ...load });
    await fixed.stop();
    const vsSql = ours.requestsPerSecond / Math.max(theirs.requestsPerSecond, 0.001);
    const vsFixed = ours.requestsPerSecond / bare.requestsPerSecond;
    rows.push({
      scenario: scenario.name,
      'replix req/s': fmt(ours.requestsPerSecond, 0),
      'fastify+mysql2 req/s': fmt(theirs.requestsPerSecond, 1),
      'bare http req/s': fmt(bare.requestsPerSecond, 0),
      'x baseline 1': fmt(vsSql),
      goal1: `>= ${scenario.goals.sql}`,
      'x baseline 2': fmt(vsFixed),
      goal2: 'fixed' in scenario.goals ? `>= ${scenario.goals.fixed}` : '-',
      'replix p99 ms': fmt(ours.p99Ms),
      'non-2xx': ours.non2xx + theirs.non2xx + bare.non2xx,
    });
  }

  const loadRatio = loadMs / stream.ms;
  const memoryRatio = snapshotHeap / dataset.csvBytes;
  printTable('Load and memory', [
    {
      measure: 'snapshot load (ms)',
      replix: fmt(loadMs, 0),
      baseline: `${fmt(stream.ms, 0)} (mysql2 stream)`,
      ratio: fmt(loadRatio),
      goal: '<= 1.5',
      met: loadRatio <= 1.5 ? 'yes' : 'NO',
    },
    {
      measure: 'snapshot bytes after GC',
      replix: `${fmt(snapshotHeap / 1e6, 1)} MB`,
      baseline: `${fmt(dataset.csvBytes / 1e6, 1)} MB (CSV)`,
      ratio: fmt(memoryRatio),
      goal: '<= 1.5',
      met: memoryRatio <= 1.5 ? 'yes' : 'NO',
    },
    {
      measure: 'engine-counted snapshot bytes',
      replix: `${fmt(generation.byteSize() / 1e6, 1)} MB`,
      baseline: `${fmt(dataset.csvBytes / 1e6, 1)} MB (CSV)`,
      ratio: fmt(generation.byteSize() / dataset.csvBytes),
      goal: '-',
      met: '-',
    },
    {
      measure: 'next generation after 1,000 changes (median ms)',
      replix: fmt(median(generationMs)),
      baseline: '-',
      ratio: '-',
      goal: '<= 25',
      met: median(generationMs) <= 25 ? 'yes' : 'NO',
    },
  ]);
  printTable('HTTP throughput (autocannon, 10 connections, same settings for every server)', rows);
  printTable('Server-side meta.timing_ms', timingRows);
} finally {
  for (const child of children) await child.stop().catch(() => {});
  await servers.stop();
}
