/**
 * `npm run bench:replication`: change data capture from real MariaDB into a running instance
 * (issue: replication, "Performance"), on a 1,000,000-row table with a 100 ms sync interval.
 *
 *   node bench/replication.ts [--rows N] [--seconds S] [--threads N]
 *
 * `--threads` sets the instance's query threads (`REPLIX_THREADS`, 1 by default): replication
 * must keep its figures with every core serving queries.
 *
 * BENCH_NODE_OPTIONS passes Node options to the instance (e.g. `--max-semi-space-size=64`).
 *
 * 1. Sustained apply rate: four writers commit small transactions (10 rows each) as fast as
 *    the source takes them; applied
 *    changes per second ÷ committed changes per second (the instance has kept up when the
 *    last change is visible one tick after the writer stops).
 * 2. Backlog apply rate: replication paused while 300,000 row changes are committed, then
 *    resumed: row changes applied per second.
 * 3. Lag at 2,000 changes/s: commit on the source to visible in a query, p50 and p99.
 */
import { writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { fileURLToPath } from 'node:url';
import { parseArgs } from 'node:util';
import { mariaDbAdmin, startTestServers } from '@replix/testkit';
import mysql from 'mysql2/promise';
import { startChildServer } from './lib/child-server.ts';
import { createBenchDataset } from './lib/dataset.ts';
import { printTable } from './lib/report.ts';

const { values: args } = parseArgs({
  options: {
    rows: { type: 'string', default: '1000000' },
    seconds: { type: 'string', default: '10' },
    threads: { type: 'string', default: '1' },
  },
});
const rows = Number(args.rows);
const seconds = Number(args.seconds);
const INTERVAL_MS = 100;
const log = (message: string) => process.stderr.write(`${message}\n`);
const replixBin = fileURLToPath(new URL('../packages/cli/bin/replix.js', import.meta.url));
const fmt = (n: number, digits = 0) => n.toFixed(digits);
const sleep = (ms: number) => new Promise((resolve) => setTimeout(resolve, ms));

function percentile(values: number[], p: number): number {
  const sorted = [...values].sort((a, b) => a - b);
  return sorted[Math.min(sorted.length - 1, Math.floor((p / 100) * sorted.length))] ?? Number.NaN;
}

const servers = await startTestServers();
let instance: Awaited<ReturnType<typeof startChildServer>> | undefined;
try {
  log(`dataset: ${rows} rows…`);
  const dataset = await createBenchDataset(mariaDbAdmin(servers.mariadb.url), {
    factRows: rows,
    dimRows: Math.max(10, rows / 10),
  });
  const url = dataset.database.url;
  const configPath = join(tmpdir(), `replix-bench-${process.pid}.json`);
  writeFileSync(
    configPath,
    JSON.stringify({
      tables: [{ name: 'fact' }],
      sync: { mode: 'cdc', interval: INTERVAL_MS / 1000 },
    }),
  );
  log('starting the instance…');
  instance = await startChildServer(
    process.execPath,
    [replixBin, 'serve', '--source', url, '--config', configPath],
    {
      REPLIX_LOG_LEVEL: 'warn',
      REPLIX_THREADS: String(args.threads),
      NODE_OPTIONS: process.env.BENCH_NODE_OPTIONS ?? '',
    },
    { readyTimeoutMs: 300_000 },
  );
  const auth = { Authorization: `Bearer ${String(instance.ready.apiKey)}` };
  const base = instance.url;
  const query = async (text: string) => {
    const response = await fetch(`${base}/query`, { method: 'POST', body: text, headers: auth });
    return (await response.json()) as { data: Record<string, number>[] };
  };
  const qtyOf = async (id: number) => (await query(`fact (id = ${id}) { qty }`)).data[0]?.qty;
  const pool = mysql.createPool({ uri: url, connectionLimit: 5 });
  let marker = 1_000_000;
  const BATCH = 1000;

  // 1. Sustained: application-style transactions (each updates 10 neighbouring rows) from
  // four connections at once, as fast as the source commits them.
  log(`sustained writes for ${seconds} s…`);
  let committed = 0;
  const started = performance.now();
  const ROWS_PER_TRANSACTION = 10;
  await Promise.all(
    Array.from({ length: 4 }, async (_, writer) => {
      let from = 1 + writer * 50_000;
      while (performance.now() - started < seconds * 1000) {
        await pool.query('UPDATE fact SET qty = qty + 1 WHERE id BETWEEN ? AND ?', [
          from,
          from + ROWS_PER_TRANSACTION - 1,
        ]);
        committed += ROWS_PER_TRANSACTION;
        from = 1 + ((from + ROWS_PER_TRANSACTION) % (rows - ROWS_PER_TRANSACTION));
      }
    }),
  );
  const writeSeconds = (performance.now() - started) / 1000;
  marker += 1;
  await pool.query('UPDATE fact SET qty = ? WHERE id = 1', [marker]);
  while ((await qtyOf(1)) !== marker) await sleep(5);
  const caughtUpSeconds = (performance.now() - started) / 1000;
  const committedRate = committed / writeSeconds;
  const appliedRate = (committed + 1) / caughtUpSeconds;

  // 2. Backlog: paused while 300,000 row changes are committed, then resumed.
  const backlog = Math.min(300_000, rows);
  log(`backlog of ${backlog} changes…`);
  await fetch(`${base}/replication/pause`, { method: 'POST', headers: auth });
  await sleep(3 * INTERVAL_MS);
  for (let from = 1; from + BATCH - 1 <= backlog; from += BATCH) {
    await pool.query('UPDATE fact SET qty = qty + 1 WHERE id BETWEEN ? AND ?', [
      from,
      from + BATCH - 1,
    ]);
  }
  marker += 1;
  await pool.query('UPDATE fact SET qty = ? WHERE id = 1', [marker]);
  const resumed = performance.now();
  await fetch(`${base}/replication/resume`, { method: 'POST', headers: auth });
  while ((await qtyOf(1)) !== marker) await sleep(5);
  const backlogRate = backlog / ((performance.now() - resumed) / 1000);

  // 3. Lag at 2,000 changes/s: every 50 ms a transaction of 100 row changes that also stamps
  // row 2 with a sequence number; a reader polls row 2 and notes when each stamp shows.
  // Let the source and the instance settle after the bulk phases (InnoDB purge, GC).
  await sleep(5000);
  log('lag at 2,000 changes/s…');
  const committedAt = new Map<number, number>();
  const lags: number[] = [];
  let reading = true;
  const reader = (async () => {
    let seen = 0;
    while (reading) {
      const stamp = await qtyOf(2);
      if (stamp !== undefined && stamp > seen && committedAt.has(stamp)) {
        for (let s = seen + 1; s <= stamp; s++) {
          const at = committedAt.get(s);
          if (at !== undefined) lags.push(performance.now() - at);
        }
        seen = stamp;
      }
      await sleep(2);
    }
  })();
  const lagStart = performance.now();
  for (let sequence = 1; performance.now() - lagStart < seconds * 1000; sequence++) {
    const due = lagStart + sequence * 50;
    if (due > performance.now()) await sleep(due - performance.now());
    const from = 10 + ((sequence * 100) % (rows - 200));
    const connection = await pool.getConnection();
    try {
      await connection.beginTransaction();
      await connection.query('UPDATE fact SET qty = qty + 1 WHERE id BETWEEN ? AND ?', [
        from,
        from + 98,
      ]);
      await connection.query('UPDATE fact SET qty = ? WHERE id = 2', [sequence]);
      await connection.commit();
      committedAt.set(sequence, performance.now());
    } finally {
      connection.release();
    }
  }
  await sleep(1000);
  reading = false;
  await reader;
  await pool.end();

  printTable(`Replication from MariaDB (${rows} rows, sync interval ${INTERVAL_MS} ms)`, [
    {
      measure: 'committed row changes/s (writer flat out)',
      value: fmt(committedRate),
      goal: '-',
      met: '-',
    },
    {
      measure: 'applied row changes/s over the same run',
      value: fmt(appliedRate),
      goal: '-',
      met: '-',
    },
    {
      measure: 'applied ÷ committed',
      value: fmt(appliedRate / committedRate, 2),
      goal: '>= 1.0 (within a tick)',
      met: caughtUpSeconds - writeSeconds <= (INTERVAL_MS + 150) / 1000 ? 'yes' : 'NO',
    },
    {
      measure: 'catch-up after the writer stopped (ms)',
      value: fmt((caughtUpSeconds - writeSeconds) * 1000),
      goal: `<= ${INTERVAL_MS + 150}`,
      met: '-',
    },
    {
      measure: 'backlog apply, row changes/s',
      value: fmt(backlogRate),
      goal: '>= 50000',
      met: backlogRate >= 50_000 ? 'yes' : 'NO',
    },
    {
      measure: 'lag p50 at 2,000 changes/s (ms)',
      value: fmt(percentile(lags, 50), 1),
      goal: '-',
      met: '-',
    },
    {
      measure: 'lag p99 at 2,000 changes/s (ms)',
      value: fmt(percentile(lags, 99), 1),
      goal: `<= ${INTERVAL_MS + 150}`,
      met: percentile(lags, 99) <= INTERVAL_MS + 150 ? 'yes' : 'NO',
    },
    { measure: 'lag samples', value: lags.length, goal: '-', met: '-' },
  ]);
} finally {
  await instance?.stop().catch(() => {});
  await servers.stop();
}
