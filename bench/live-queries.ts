/**
 * `npm run bench:live`: live queries (issue 18) over change data capture from real MariaDB.
 *
 *   node bench/live-queries.ts [--subscribers 1000] [--queries 100] [--seconds 10]
 *
 * A table of 10,000 rows in 100 groups; query k is `items (grp = k) { id v ts } ORDER BY ts
 * DESC LIMIT 3`. A writer commits 100 transactions a second of 20 row updates each (2,000 row
 * changes/s), each stamping its rows with its commit number.
 *
 * 1. Baseline: the same writes with no subscriber, and one client polling a query every 10 ms
 *    (the way to see changes without live queries): commit → visible in a poll, p50/p99, and
 *    the instance's CPU per swap.
 * 2. Live: `--subscribers` streams over `--queries` distinct queries: commit → event received
 *    by each subscriber of the commit's groups, p50/p99 (goal: p99 ≤ sync interval + 100 ms),
 *    the instance's CPU per swap, and both as ratios to the baseline's.
 */
import { readFileSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { fileURLToPath } from 'node:url';
import { parseArgs } from 'node:util';
import { EventStreamReader, mariaDbAdmin, startTestServers } from '@replix/testkit';
import mysql from 'mysql2/promise';
import { startChildServer } from './lib/child-server.ts';
import { percentile } from './lib/percentile.ts';
import { printTable } from './lib/report.ts';

const { values: args } = parseArgs({
  options: {
    subscribers: { type: 'string', default: '1000' },
    queries: { type: 'string', default: '100' },
    seconds: { type: 'string', default: '10' },
  },
});
const SUBSCRIBERS = Number(args.subscribers);
const QUERIES = Number(args.queries);
const SECONDS = Number(args.seconds);
const ROWS = 10_000;
const INTERVAL_MS = 100;
const ROWS_PER_COMMIT = 20;
const COMMITS_PER_SECOND = 100;
const log = (message: string) => process.stderr.write(`${message}\n`);
const replixBin = fileURLToPath(new URL('../packages/cli/bin/replix.js', import.meta.url));
const sleep = (ms: number) => new Promise((resolve) => setTimeout(resolve, ms));
const fmt = (n: number, digits = 0) => n.toFixed(digits);
const queryOf = (group: number) => `items (grp = ${group}) { id v ts } ORDER BY ts DESC LIMIT 3`;

/** CPU seconds (user + system) a process has used, from /proc. */
function cpuSeconds(pid: number): number {
  const fields = readFileSync(`/proc/${pid}/stat`, 'utf8').split(') ')[1]?.split(' ') ?? [];
  return (Number(fields[11]) + Number(fields[12])) / 100;
}

/** Commits `ROWS_PER_COMMIT` random rows per transaction at a steady rate, for `ms`. */
async function writeFor(
  pool: mysql.Pool,
  ms: number,
  committed: (sequence: number, groups: Set<number>, at: number) => void,
  first: number,
): Promise<number> {
  const started = performance.now();
  let sequence = first;
  for (let n = 1; performance.now() - started < ms; n++) {
    const due = started + (n * 1000) / COMMITS_PER_SECOND;
    if (due > performance.now()) await sleep(due - performance.now());
    sequence += 1;
    const ids = Array.from({ length: ROWS_PER_COMMIT }, () => 1 + Math.floor(Math.random() * ROWS));
    const at = performance.now();
    await pool.query('UPDATE items SET ts = ?, v = v + 1 WHERE id IN (?)', [sequence, ids]);
    committed(sequence, new Set(ids.map((id) => id % QUERIES)), at);
  }
  return sequence;
}

const servers = await startTestServers();
let instance: Awaited<ReturnType<typeof startChildServer>> | undefined;
try {
  const db = await mariaDbAdmin(servers.mariadb.url).createDatabase(`
    CREATE TABLE items (id INT PRIMARY KEY, grp INT NOT NULL, v INT NOT NULL, ts BIGINT NOT NULL, KEY (grp));
    INSERT INTO items SELECT seq, seq % ${QUERIES}, 0, 0 FROM seq_1_to_${ROWS};
  `);
  const configPath = join(tmpdir(), `replix-bench-live-${process.pid}.json`);
  writeFileSync(
    configPath,
    JSON.stringify({
      tables: [{ name: 'items' }],
      sync: { mode: 'cdc', interval: INTERVAL_MS / 1000 },
    }),
  );
  instance = await startChildServer(
    process.execPath,
    [replixBin, 'serve', '--source', db.url, '--config', configPath],
    { REPLIX_LOG_LEVEL: 'warn' },
    { readyTimeoutMs: 120_000 },
  );
  const key = String(instance.ready.apiKey);
  const adminKey = String(instance.ready.adminKey);
  const base = instance.url;
  const pid = instance.pid;
  const swaps = async () => {
    const text = await (
      await fetch(`${base}/metrics`, { headers: { Authorization: `Bearer ${adminKey}` } })
    ).text();
    return Number(/^replix_swaps_total (\d+)/m.exec(text)?.[1] ?? Number.NaN);
  };
  const pool = mysql.createPool({ uri: db.url, connectionLimit: 4 });
  let sequence = 0;

  // 1. Baseline: a poller, no subscriber.
  log(`baseline: ${SECONDS} s of writes, one client polling…`);
  const pollLags: number[] = [];
  const pending = new Map<number, { groups: Set<number>; at: number }>();
  let polling = true;
  const poller = (async () => {
    for (let group = 0; polling; group = (group + 1) % QUERIES) {
      const response = await fetch(`${base}/query`, {
        method: 'POST',
        body: queryOf(group),
        headers: { Authorization: `Bearer ${key}` },
      });
      const body = (await response.json()) as { data: { ts: number }[] };
      const newest = body.data[0]?.ts ?? 0;
      const now = performance.now();
      for (const [seq, commit] of pending) {
        if (seq > newest || !commit.groups.has(group)) continue;
        pollLags.push(now - commit.at);
        commit.groups.delete(group);
        if (commit.groups.size === 0) pending.delete(seq);
      }
      await sleep(10);
    }
  })();
  let cpu = cpuSeconds(pid);
  let swapCount = await swaps();
  sequence = await writeFor(
    pool,
    SECONDS * 1000,
    (seq, groups, at) => pending.set(seq, { groups, at }),
    sequence,
  );
  await sleep(500);
  polling = false;
  await poller;
  const baseCpu = cpuSeconds(pid) - cpu;
  const baseSwaps = (await swaps()) - swapCount;

  // 2. Live: subscribers spread over the queries.
  log(`live: opening ${SUBSCRIBERS} streams over ${QUERIES} queries…`);
  const streams: { group: number; events: EventStreamReader; seen: number }[] = [];
  for (let i = 0; i < SUBSCRIBERS; i++) {
    const group = i % QUERIES;
    const response = await fetch(`${base}/query?q=${encodeURIComponent(queryOf(group))}`, {
      headers: { Authorization: `Bearer ${key}`, Accept: 'text/event-stream' },
    });
    if (response.status !== 200)
      throw new Error(`subscribe: ${response.status} ${await response.text()}`);
    const events = new EventStreamReader(response);
    const first = await events.next(30_000);
    if (!first) throw new Error('no first event');
    const seen = (JSON.parse(first.data) as { data: { ts: number }[] }).data[0]?.ts ?? 0;
    streams.push({ group, events, seen });
  }
  // Commits by sequence, and per subscriber the commits it has yet to see.
  const commits = new Map<number, { groups: Set<number>; at: number }>();
  const liveLags: number[] = [];
  let events = 0;
  let listening = true;
  const listeners = streams.map(async (stream) => {
    while (listening) {
      const event = await stream.events.next(200);
      if (!event) continue;
      const now = performance.now();
      events += 1;
      const newest = (JSON.parse(event.data) as { data: { ts: number }[] }).data[0]?.ts ?? 0;
      for (let seq = stream.seen + 1; seq <= newest; seq++) {
        const commit = commits.get(seq);
        if (commit?.groups.has(stream.group)) liveLags.push(now - commit.at);
      }
      stream.seen = Math.max(stream.seen, newest);
    }
  });
  log(`live: ${SECONDS} s of writes…`);
  cpu = cpuSeconds(pid);
  swapCount = await swaps();
  sequence = await writeFor(
    pool,
    SECONDS * 1000,
    (seq, groups, at) => commits.set(seq, { groups, at }),
    sequence,
  );
  await sleep(1000);
  const liveCpu = cpuSeconds(pid) - cpu;
  const liveSwaps = (await swaps()) - swapCount;
  listening = false;
  await Promise.all(listeners);
  // Every subscriber of a group a commit touched should have seen it.
  let expected = 0;
  for (const commit of commits.values()) expected += (commit.groups.size * SUBSCRIBERS) / QUERIES;
  for (const stream of streams) await stream.events.close();
  await pool.end();

  const baseCpuPerSwap = (baseCpu / baseSwaps) * 1000;
  const liveCpuPerSwap = (liveCpu / liveSwaps) * 1000;
  const p99 = percentile(liveLags, 99);
  printTable(
    `Live queries: ${SUBSCRIBERS} subscribers over ${QUERIES} queries, ${ROWS_PER_COMMIT * COMMITS_PER_SECOND} row changes/s, sync interval ${INTERVAL_MS} ms`,
    [
      {
        measure: 'poll: commit → visible p50 (ms)',
        value: fmt(percentile(pollLags, 50), 1),
        goal: '-',
        met: '-',
      },
      {
        measure: 'poll: commit → visible p99 (ms)',
        value: fmt(percentile(pollLags, 99), 1),
        goal: '-',
        met: '-',
      },
      {
        measure: 'live: commit → event p50 (ms)',
        value: fmt(percentile(liveLags, 50), 1),
        goal: '-',
        met: '-',
      },
      {
        measure: 'live: commit → event p99 (ms)',
        value: fmt(p99, 1),
        goal: `<= ${INTERVAL_MS + 100}`,
        met: p99 <= INTERVAL_MS + 100 ? 'yes' : 'NO',
      },
      {
        measure: 'live p99 ÷ poll p99',
        value: fmt(p99 / percentile(pollLags, 99), 2),
        goal: '-',
        met: '-',
      },
      {
        measure: 'commit → event samples (expected)',
        value: `${liveLags.length} (${fmt(expected)})`,
        goal: '-',
        met: liveLags.length >= expected * 0.99 ? 'yes' : 'NO',
      },
      { measure: 'events received', value: events, goal: '-', met: '-' },
      {
        measure: 'swaps (baseline, live)',
        value: `${baseSwaps}, ${liveSwaps}`,
        goal: '-',
        met: '-',
      },
      {
        measure: 'instance CPU per swap, baseline (ms)',
        value: fmt(baseCpuPerSwap, 1),
        goal: '-',
        met: '-',
      },
      {
        measure: 'instance CPU per swap, live (ms)',
        value: fmt(liveCpuPerSwap, 1),
        goal: '-',
        met: '-',
      },
      {
        measure: 'live ÷ baseline CPU per swap',
        value: fmt(liveCpuPerSwap / baseCpuPerSwap, 2),
        goal: '-',
        met: '-',
      },
    ],
  );
} finally {
  await instance?.stop().catch(() => {});
  await servers.stop();
}
