import { spawn } from 'node:child_process';
import { fileURLToPath } from 'node:url';
import { mariaDbAdmin, startTestServers } from '@replix/testkit';
import { startChildServer } from './lib/child-server.ts';
import { createBenchDataset } from './lib/dataset.ts';
import { measureThroughput } from './lib/http-load.ts';
const replixBin = process.argv[2] ?? fileURLToPath(new URL('../packages/cli/bin/replix.js', import.meta.url));
const fixedServer = fileURLToPath(new URL('./lib/fixed-body-server.ts', import.meta.url));
const servers = await startTestServers();
try {
  const dataset = await createBenchDataset(mariaDbAdmin(servers.mariadb.url), { factRows: 10000, dimRows: 1000 });
  const child = await startChildServer(process.execPath, [replixBin, 'serve', '--source', dataset.database.url, '--port', '0'], { REPLIX_LOG_LEVEL: 'warn' });
  const fixed = await startChildServer(process.execPath, [fixedServer, '--bytes', '301', '--port', '0']);
  const paths = Array.from({ length: 50 }, (_, i) => `/query?q=${encodeURIComponent(`fact (id = ${i + 1}) { id qty amount }`)}`);
  for (const [name, c, p, h] of [['replix', child, paths, { Authorization: `Bearer ${String(child.ready.apiKey)}` }], ['bare', fixed, ['/'], {}]] as const) {
    await measureThroughput({ url: c.url, paths: [...p], headers: h, durationSeconds: 1, warmupSeconds: 0, connections: 16 });
    const strace = spawn('strace', ['-c', '-f', '-p', String(c.pid)], { stdio: ['ignore', 'ignore', 'pipe'] });
    let out = '';
    strace.stderr.on('data', (d) => (out += d));
    await new Promise((r) => setTimeout(r, 500));
    const r = await measureThroughput({ url: c.url, paths: [...p], headers: h, durationSeconds: 3, warmupSeconds: 0, connections: 16 });
    strace.kill('SIGINT');
    await new Promise((r) => strace.once('close', r));
    console.log(name, 'requests', Math.round(r.requestsPerSecond * 3), '\n', out.split('\n').slice(0, 14).join('\n'));
  }
  await child.stop();
  await fixed.stop();
} finally {
  await servers.stop();
}
