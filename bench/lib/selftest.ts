/**
 * End-to-end check of the benchmark's building blocks, without the Replix engine: throwaway
 * MariaDB, a small deterministic dataset, the mysql2 stream baseline, both baseline servers as
 * children and a short load run against each scenario. Exits 1 if any piece misbehaves.
 *
 *   node bench/lib/selftest.ts [--fact-rows 20000] [--dim-rows 2000] [--seconds 2]
 */
import { fileURLToPath } from 'node:url';
import { parseArgs } from 'node:util';
import { mariaDbAdmin, startTestServers } from '@replix/testkit';
import { mulberry32 } from '@replix/testkit/mulberry32';
import { type ChildServer, startChildServer } from './child-server.ts';
import { type BenchDataset, CATEGORIES, createBenchDataset } from './dataset.ts';
import { measureThroughput } from './http-load.ts';
import { timeMysqlStream } from './mysql-stream-baseline.ts';
import { printTable } from './report.ts';

const { values } = parseArgs({
  options: {
    'fact-rows': { type: 'string', default: '20000' },
    'dim-rows': { type: 'string', default: '2000' },
    seconds: { type: 'string', default: '2' },
  },
});
const factRows = Number(values['fact-rows']);
const dimRows = Number(values['dim-rows']);
const durationSeconds = Number(values.seconds);

const script = (name: string) => fileURLToPath(new URL(name, import.meta.url));

/** `count` deterministic ids in 1..max, so keyed scenarios spread over the table. */
function ids(count: number, max: number, seed: number): number[] {
  const random = mulberry32(seed);
  return Array.from({ length: count }, () => 1 + Math.floor(random() * max));
}

const scenarios: Array<{ name: string; paths: string[] }> = [
  { name: 'a: pk lookup', paths: ids(64, factRows, 1).map((id) => `/a?id=${id}`) },
  { name: 'b: filter+sort', paths: CATEGORIES.map((c) => `/b?category=${c}`) },
  { name: 'c: group by', paths: ['/c'] },
  { name: 'd: parent+children', paths: ids(64, dimRows, 2).map((id) => `/d?id=${id}`) },
  { name: 'e: filter+sort decimal', paths: CATEGORIES.map((c) => `/e?category=${c}`) },
  { name: 'f: group by, sum decimal', paths: ['/f'] },
  { name: 'g: decimal filter', paths: ['/g?floor=99000.50'] },
];

const problems: string[] = [];
function expect(ok: boolean, message: string): void {
  if (!ok) problems.push(message);
}

async function getJson(url: string): Promise<unknown> {
  const response = await fetch(url);
  expect(response.ok, `${url} answered ${response.status}`);
  return response.json();
}

const servers = await startTestServers();
const children: ChildServer[] = [];
let dataset: BenchDataset | undefined;
try {
  const started = performance.now();
  dataset = await createBenchDataset(mariaDbAdmin(servers.mariadb.url), { factRows, dimRows });
  const datasetMs = performance.now() - started;
  const stream = await timeMysqlStream(dataset.database.url, ['dim', 'fact']);
  expect(stream.rows === factRows + dimRows, `streamed ${stream.rows} rows`);
  printTable('Dataset and load baseline', [
    { what: 'create dataset (generate + LOAD DATA)', rows: factRows + dimRows, ms: datasetMs },
    { what: 'mysql2 stream SELECT * dim, fact', rows: stream.rows, ms: stream.ms },
    { what: 'CSV size (bytes)', rows: factRows + dimRows, bytes: dataset.csvBytes },
  ]);

  const sql = await startChildServer(process.execPath, [
    script('./sql-baseline-server.ts'),
    ...['--url', dataset.database.url, '--port', '0'],
  ]);
  children.push(sql);

  // The baseline must answer what the scenarios ask, or its throughput means nothing.
  const groups = (await getJson(`${sql.url}/c`)) as Array<{ count: number }>;
  const grouped = groups.reduce((sum, group) => sum + group.count, 0);
  expect(grouped === factRows, `/c counts ${grouped} rows`);
  const parent = (await getJson(`${sql.url}/d?id=1`)) as { fact?: unknown[] };
  expect(parent.fact?.length === factRows / dimRows, `/d has ${parent.fact?.length} children`);
  const page = (await getJson(`${sql.url}/b?category=books`)) as unknown[];
  expect(page.length === Math.min(50, factRows), `/b returned ${page.length} rows`);
  const byPrice = (await getJson(`${sql.url}/e?category=books`)) as unknown[];
  expect(byPrice.length === Math.min(50, factRows), `/e returned ${byPrice.length} rows`);
  const sums = (await getJson(`${sql.url}/f`)) as Array<{ count: number }>;
  const summed = sums.reduce((sum, group) => sum + group.count, 0);
  expect(summed === factRows, `/f counts ${summed} rows`);
  const [above] = (await getJson(`${sql.url}/g?floor=0`)) as Array<{ count: number }>;
  const counted = above?.count ?? 0;
  expect(counted > 0 && counted <= factRows, `/g counts ${counted} rows above 0`);

  const rows: Array<Record<string, string | number>> = [];
  for (const scenario of scenarios) {
    const load = { paths: scenario.paths, durationSeconds, warmupSeconds: 0.5 };
    const viaSql = await measureThroughput({ url: sql.url, ...load });
    const fixed = await startChildServer(process.execPath, [
      script('./fixed-body-server.ts'),
      ...['--bytes', String(Math.round(viaSql.bodyBytes)), '--port', '0'],
    ]);
    children.push(fixed);
    const viaFixed = await measureThroughput({ url: fixed.url, ...load });
    await fixed.stop();
    for (const [server, result] of [
      ['fastify+mysql2', viaSql],
      ['fixed body', viaFixed],
    ] as const) {
      expect(result.non2xx === 0 && result.errors === 0, `${scenario.name} via ${server} failed`);
      rows.push({
        scenario: scenario.name,
        server,
        'req/s': Math.round(result.requestsPerSecond),
        'p50 ms': result.p50Ms,
        'p99 ms': result.p99Ms,
        'body B': Math.round(result.bodyBytes),
        'wire B': Math.round(result.bytesPerResponse),
        non2xx: result.non2xx,
        errors: result.errors,
      });
    }
    expect(
      Math.abs(viaFixed.bodyBytes - Math.round(viaSql.bodyBytes)) < 1,
      `${scenario.name}: fixed body is ${viaFixed.bodyBytes} bytes`,
    );
  }
  printTable(`HTTP throughput (${durationSeconds} s, 10 connections)`, rows);
} catch (error) {
  problems.push(error instanceof Error ? (error.stack ?? error.message) : String(error));
} finally {
  await Promise.all(children.map((child) => child.stop()));
  await dataset?.database.drop();
  await servers.stop();
}

if (problems.length > 0) {
  process.stderr.write(`\nselftest FAILED:\n${problems.map((p) => `- ${p}`).join('\n')}\n`);
  process.exitCode = 1;
} else {
  process.stdout.write('\nselftest passed\n');
}
