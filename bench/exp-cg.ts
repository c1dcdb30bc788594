// temporary, not committed: instruction counts per request under callgrind
import { spawn } from 'node:child_process';
import { Agent, request } from 'node:http';
import { mariaDbAdmin, startTestServers } from '@replix/testkit';
import { createBenchDataset } from './lib/dataset.ts';

const [which, nText, out] = process.argv.slice(2) as [string, string, string];
const n = Number(nText);
const servers = await startTestServers();
const dataset = await createBenchDataset(mariaDbAdmin(servers.mariadb.url), {
  factRows: 10000,
  dimRows: 1000,
});
const root = new URL('..', import.meta.url).pathname;
const args =
  which === 'replix'
    ? [
        `${root}packages/cli/bin/replix.js`,
        'serve',
        '--source',
        dataset.database.url,
        '--port',
        '0',
      ]
    : [
        `${root}bench/lib/${which === 'B' ? 'fixed-body-server' : 'fastify-fixed-server'}.ts`,
        '--bytes',
        '301',
        '--port',
        '0',
      ];
const child = spawn(
  'valgrind',
  [
    '--tool=callgrind',
    '--smc-check=all-non-file',
    '--separate-threads=yes',
    `--callgrind-out-file=${out}`,
    process.execPath,
    '--perf-basic-prof',
    ...args,
  ],
  {
    env: { ...process.env, REPLIX_LOG_LEVEL: 'warn', REPLIX_THREADS: '1' },
    stdio: ['ignore', 'pipe', 'inherit'],
  },
);
let buffered = '';
const ready = await new Promise<Record<string, string>>((resolve) =>
  child.stdout.on('data', (d) => {
    buffered += String(d);
    for (const line of buffered.split('\n')) {
      try {
        const v = JSON.parse(line);
        if (v.event === 'ready') resolve(v);
      } catch {}
    }
  }),
);
const url = new URL(ready.url);
const headers = which === 'replix' ? { authorization: `Bearer ${ready.apiKey}` } : {};
const ids = Array.from({ length: 200 }, (_, i) => 1 + ((i * 4999) % 10000));
const paths =
  which === 'replix'
    ? ids.map((id) => `/query?q=${encodeURIComponent(`fact (id = ${id}) { id qty amount }`)}`)
    : ['/'];
const agent = new Agent({ keepAlive: true, maxSockets: 4 });
const get = (path: string) =>
  new Promise<void>((resolve, reject) => {
    const r = request({ host: url.hostname, port: url.port, path, headers, agent }, (res) => {
      res.resume();
      res.on('end', () =>
        res.statusCode === 200 ? resolve() : reject(new Error(String(res.statusCode))),
      );
    });
    r.on('error', reject);
    r.end();
  });
// warm-up always, then n more
const total = 3000 + n;
let next = 0;
await Promise.all(
  Array.from({ length: 4 }, async () => {
    while (next < total) {
      const i = next++;
      await get(paths[i % paths.length]!);
    }
  }),
);
child.kill('SIGTERM');
await new Promise((r) => child.once('exit', r));
agent.destroy();
await servers.stop();
console.log(which, n, 'done');
