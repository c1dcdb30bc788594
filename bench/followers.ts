/**
 * `npm run bench:followers`: how far behind the source follower replicas are (issue 29). A
 * leader replica replicates from a throwaway PostgreSQL (logical replication) and keeps its
 * change feed; two followers start from its checkpoint and follow its feed. Single-row inserts
 * are committed one at a time; each replica is asked for the new row every 2 ms until it
 * serves it. A replica's lag for that row is the time from the commit to its first answer with
 * it; the follower's extra lag (its lag minus the leader's, row by row) is what following costs.
 *
 *   node bench/followers.ts [--rows N] [--interval S]
 *
 * All three replicas run in this process, so they share its one event loop with the prober:
 * the figures are an upper bound for replicas on cores of their own. Goal: a follower's lag p99
 * at most the leader's + 100 ms.
 */
import { mkdtempSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { parseArgs } from 'node:util';
import { parseSchemaConfig } from '@replix/engine';
import { deriveApiKey, newKeyId, newKeySecret } from '@replix/instance-protocol';
import { postgresAdmin, startDedicatedServer } from '@replix/testkit';
import {
  createLogger,
  type RunningInstance,
  startInstance,
} from '../packages/instance/src/index.ts';
import { percentile } from './lib/percentile.ts';
import { printTable } from './lib/report.ts';

const { values: args } = parseArgs({
  options: {
    rows: { type: 'string', default: '200' },
    interval: { type: 'string', default: '0.1' },
  },
});
const ROWS = Number(args.rows);
const INTERVAL_S = Number(args.interval);
const PROBE_MS = 2;

const log = (message: string) => console.error(`[bench:followers] ${message}`);
const sleep = (ms: number) => new Promise((resolve) => setTimeout(resolve, ms));

const server = await startDedicatedServer('postgres');
const folder = mkdtempSync(join(tmpdir(), 'replix-bench-followers-'));
const running: RunningInstance[] = [];
try {
  const db = await postgresAdmin(server.url).createDatabase(
    'CREATE TABLE item (id INT PRIMARY KEY, note TEXT NOT NULL); INSERT INTO item SELECT g, md5(g::text) FROM generate_series(1, 10000) g',
  );
  const keySecret = newKeySecret();
  const keyId = newKeyId();
  const adminKeyId = newKeyId();
  const key = deriveApiKey(keySecret, keyId);
  const silent = createLogger(process.env.BENCH_LOG ?? 'silent');
  const start = (options: { followUrl?: string; changeFeed?: boolean }) =>
    startInstance(
      {
        sourceUrl: db.url,
        schemaConfig: parseSchemaConfig({ sync: { mode: 'cdc', interval: INTERVAL_S } }),
        host: '127.0.0.1',
        port: 0,
        keySecret,
        keyIds: [keyId],
        adminKeyIds: [adminKeyId],
        generatedKey: false,
        buildHash: 'bench0000000',
        logLevel: 'silent',
        checkpoints: { dir: folder, schedule: { intervalMs: 60_000, changes: 100_000 } },
      },
      silent,
      { replicationId: db.name, ...options },
    );
  const leader = await start({ changeFeed: true });
  running.push(leader);
  for (let k = 1; k <= 2; k++) running.push(await start({ followUrl: leader.url }));
  log(`leader and 2 followers serving; ${ROWS} inserts, sync interval ${INTERVAL_S} s`);

  const names = ['leader', 'follower 1', 'follower 2'];
  const lags: number[][] = names.map(() => []);
  const sees = async (instance: RunningInstance, id: number) => {
    const response = await fetch(
      `${instance.url}/query?q=${encodeURIComponent(`item (id = ${id}) { id }`)}`,
      { headers: { authorization: `Bearer ${key}` } },
    );
    const body = (await response.json()) as { data?: unknown[] };
    if (!body.data) throw new Error(`the probe failed: ${JSON.stringify(body).slice(0, 300)}`);
    return body.data.length > 0;
  };
  for (let row = 0; row < ROWS; row++) {
    const id = 100_000 + row;
    await db.exec(`INSERT INTO item VALUES (${id}, 'x')`);
    const committed = performance.now();
    await Promise.all(
      running.map(async (instance, replica) => {
        const deadline = performance.now() + 60_000;
        while (!(await sees(instance, id))) {
          if (performance.now() > deadline)
            throw new Error(`${names[replica]} never served row ${id}`);
          await sleep(PROBE_MS);
        }
        lags[replica]?.push(performance.now() - committed);
      }),
    );
    // Commits land at random points of the sync interval.
    await sleep(Math.random() * INTERVAL_S * 1000);
  }

  const leaderLags = lags[0] as number[];
  const rows = names.map((name, replica) => {
    const own = lags[replica] as number[];
    const extra = own.map((lag, i) => lag - (leaderLags[i] as number));
    return {
      replica: name,
      'lag p50 ms': percentile(own, 50),
      'lag p99 ms': percentile(own, 99),
      'extra p50 ms': replica === 0 ? '' : percentile(extra, 50),
      'extra p99 ms': replica === 0 ? '' : percentile(extra, 99),
    };
  });
  printTable(`Lag from commit to first answer, ${ROWS} rows`, rows);
  const leaderP99 = percentile(leaderLags, 99);
  for (const [replica, name] of names.entries()) {
    if (replica === 0) continue;
    const p99 = percentile(lags[replica] as number[], 99);
    const held = p99 <= leaderP99 + 100;
    console.log(
      `${name}: lag p99 ${p99.toFixed(1)} ms vs the leader's ${leaderP99.toFixed(1)} ms + 100: goal ${held ? 'held' : 'NOT held'}`,
    );
  }
} finally {
  for (const instance of running.reverse()) await instance.close().catch(() => {});
  await server.stop();
  rmSync(folder, { recursive: true, force: true });
}
