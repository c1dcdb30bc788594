/**
 * `npm run bench:replicas`: read replicas on the process driver (issue 16). One database's
 * endpoint (the process driver's router) under autocannon load, first routed to an instance
 * with one replica, then to one with two, in the same run: throughput and latency of each, their
 * ratio, and the share of the requests each replica served (from each replica's own
 * `/metrics` query counts).
 *
 *   node bench/replicas.ts [--rows N] [--seconds S] [--connections C]
 *
 * The source is a throwaway MariaDB with an `item` table of `--rows` rows (default 50,000); the
 * queries are a primary-key lookup and a filter + ORDER BY + LIMIT 50 over the whole table,
 * alternating. Replicas help when the instance's one thread is the limit: on a machine with
 * few cores the load generator and the router (both in this process) compete with the replicas
 * for the same cores, so the ratio is a floor, not a promise.
 */
import { randomUUID } from 'node:crypto';
import { mkdtempSync, rmSync } from 'node:fs';
import { availableParallelism, loadavg, tmpdir } from 'node:os';
import { join } from 'node:path';
import { fileURLToPath } from 'node:url';
import { parseArgs } from 'node:util';
import {
  deriveApiKey,
  newKeyId,
  newKeySecret,
  parseInstanceMetrics,
} from '@replix/instance-protocol';
import { mariaDbAdmin, startTestServers } from '@replix/testkit';
import pino from 'pino';
import type { InstanceLaunch } from '../packages/control-plane/src/adapters/drivers/instance-launch.ts';
import { ProcessDriver } from '../packages/control-plane/src/adapters/drivers/process/process-driver.ts';
import { measureThroughput } from './lib/http-load.ts';
import { printTable } from './lib/report.ts';

const { values: args } = parseArgs({
  options: {
    rows: { type: 'string', default: '50000' },
    seconds: { type: 'string', default: '10' },
    connections: { type: 'string', default: '16' },
  },
});
const ROWS = Number(args.rows);
const SECONDS = Number(args.seconds);
const CONNECTIONS = Number(args.connections);
const REPLIX_BIN = fileURLToPath(new URL('../packages/cli/bin/replix.js', import.meta.url));

const log = (message: string) => console.error(`[bench:replicas] ${message}`);

/** `replix serve --source` on the launch's source: the artifact's program, without a build. */
function serveSource(launch: InstanceLaunch, port: number): string[] {
  return [
    REPLIX_BIN,
    'serve',
    '--source',
    launch.sourceUrl,
    '--port',
    String(port),
    '--host',
    '127.0.0.1',
  ];
}

const servers = await startTestServers();
const dataDir = mkdtempSync(join(tmpdir(), 'replix-bench-replicas-'));
const driver = new ProcessDriver({
  dataDir,
  log: pino({ level: 'silent' }),
  programArgs: serveSource,
});
try {
  log(`source: item with ${ROWS} rows…`);
  const source = await mariaDbAdmin(servers.mariadb.url).createDatabase(
    `CREATE TABLE item (id INT PRIMARY KEY, name VARCHAR(40) NOT NULL, price INT NOT NULL);
     SET SESSION max_recursive_iterations = ${ROWS + 1};
     INSERT INTO item
       WITH RECURSIVE n(i) AS (SELECT 1 UNION ALL SELECT i + 1 FROM n WHERE i < ${ROWS})
       SELECT i, CONCAT('item ', MD5(i)), i * 7919 % 10007 FROM n`,
  );
  const keyId = newKeyId();
  const keySecret = newKeySecret();
  const apiKey = deriveApiKey(keySecret, keyId);
  const adminKeyId = newKeyId();
  const databaseId = randomUUID();
  const launch = (replicas: number): InstanceLaunch => ({
    instanceId: randomUUID(),
    databaseId,
    buildId: randomUUID(),
    artifactDir: '/nonexistent',
    sourceUrl: source.url,
    ssh: undefined,
    keySecretHex: keySecret.toString('hex'),
    keys: { keyIds: [keyId], adminKeyIds: [adminKeyId] },
    replicationId: `rx_bench_${databaseId.slice(0, 8)}`,
    replicas,
    // Poll once an hour: replication stays out of the measurement.
    settings: {
      instanceSize: 'm',
      taskCpu: 1,
      taskMemoryMb: 2048,
      syncMode: 'poll',
      syncInterval: 3600,
      logLevel: 'warn',
      safetyNet: 0,
    },
    replicationPaused: false,
  });
  const endpoint = await driver.openEndpoint(databaseId, null);
  const paths = [
    `/query?q=${encodeURIComponent(`item (id = ${Math.ceil(ROWS / 3)}) { id name price }`)}`,
    `/query?q=${encodeURIComponent("item (name LIKE '%7a%' AND price > 5000) { id name price } ORDER BY price DESC LIMIT 50")}`,
  ];
  const adminKey = deriveApiKey(keySecret, adminKeyId);
  const queriesOf = async (url: string) => {
    const response = await fetch(`${url}/metrics`, {
      headers: { authorization: `Bearer ${adminKey}` },
    });
    return parseInstanceMetrics(await response.text()).queriesOk;
  };

  const rows: Array<Record<string, string | number>> = [];
  let baseline = Number.NaN;
  for (const replicas of [1, 2]) {
    const one = launch(replicas);
    log(`starting an instance with ${replicas} replica(s)…`);
    await driver.start(one);
    const urls = (await driver.replicas(one.instanceId)).map((replica) => replica.url as string);
    for (const url of urls) {
      while (
        (await fetch(`${url}/health`).then(
          (r) => r.status,
          () => 0,
        )) !== 200
      )
        await new Promise((resolve) => setTimeout(resolve, 200));
    }
    await driver.route(databaseId, one.instanceId);
    log(`measuring ${SECONDS} s through the endpoint (${CONNECTIONS} connections)…`);
    const before = await Promise.all(urls.map(queriesOf));
    const result = await measureThroughput({
      url: endpoint.url,
      paths,
      headers: { authorization: `Bearer ${apiKey}` },
      connections: CONNECTIONS,
      durationSeconds: SECONDS,
    });
    const after = await Promise.all(urls.map(queriesOf));
    const served = after.map((count, ordinal) => count - (before[ordinal] ?? 0));
    const total = served.reduce((a, b) => a + b, 0);
    if (replicas === 1) baseline = result.requestsPerSecond;
    rows.push({
      replicas,
      'requests/s': result.requestsPerSecond,
      'ratio to 1 replica': result.requestsPerSecond / baseline,
      'p50 ms': result.p50Ms,
      'p99 ms': result.p99Ms,
      'non-2xx': result.non2xx + result.errors,
      'share per replica': served
        .map((count) => `${((100 * count) / total).toFixed(1)}%`)
        .join(' / '),
    });
    await driver.stop(one.instanceId);
  }
  printTable(
    `One endpoint, 1 vs 2 replicas (${availableParallelism()} cores shared with the load generator and the router; load average ${loadavg()[0]?.toFixed(2)})`,
    rows,
  );
  await driver.closeEndpoint(databaseId);
  await source.drop();
} finally {
  await driver.shutdown();
  rmSync(dataDir, { recursive: true, force: true });
  await servers.stop();
}
