/**
 * `node bench/endpoint-router.ts [--requests N] [--rounds R] [--bytes B]`: what the process
 * driver's endpoint router (`replix router`, a process of its own) adds to a query's latency.
 * A stand-in instance (`lib/fixed-body-server.ts`: a bare `node:http` server answering B bytes
 * of JSON, about a PK lookup's answer) runs in a child process; the router runs as the driver
 * runs it, in another, serving a routes file that points one endpoint at it. The client here
 * sends N requests one after another over one kept-alive connection, straight to the instance's
 * port and through the endpoint, in turn, R rounds; it prints each path's p50 and p99 and the
 * router's p99 as a ratio of the direct path's, measured in the same run. On a shared machine,
 * read the ratio, not the microseconds.
 */
import { spawn } from 'node:child_process';
import { mkdtempSync, readFileSync, rmSync } from 'node:fs';
import { Agent, request } from 'node:http';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { parseArgs } from 'node:util';
import { writeRoutesFile } from '../packages/control-plane/src/adapters/drivers/process/router-routes.ts';
import { startChildServer } from './lib/child-server.ts';
import { percentile } from './lib/percentile.ts';
import { printTable } from './lib/report.ts';

const { values } = parseArgs({
  options: {
    requests: { type: 'string', default: '5000' },
    rounds: { type: 'string', default: '3' },
    bytes: { type: 'string', default: '200' },
  },
});
const requests = Number(values.requests);
const rounds = Number(values.rounds);
const REPLIX = new URL('../packages/cli/bin/replix.js', import.meta.url).pathname;
const FIXED = new URL('./lib/fixed-body-server.ts', import.meta.url).pathname;

function get(agent: Agent, port: number): Promise<void> {
  return new Promise((resolve, reject) => {
    const req = request({ host: '127.0.0.1', port, path: '/query?q=x', agent }, (res) => {
      res.resume();
      res.once('end', () =>
        res.statusCode === 200 ? resolve() : reject(new Error(`${res.statusCode}`)),
      );
    });
    req.once('error', reject);
    req.end();
  });
}

/** Microseconds of each of `count` requests, one after another on one connection. */
async function latencies(port: number, count: number): Promise<number[]> {
  const agent = new Agent({ keepAlive: true, maxSockets: 1 });
  for (let i = 0; i < 200; i++) await get(agent, port);
  const times: number[] = [];
  for (let i = 0; i < count; i++) {
    const start = process.hrtime.bigint();
    await get(agent, port);
    times.push(Number(process.hrtime.bigint() - start) / 1000);
  }
  agent.destroy();
  return times;
}

const dir = mkdtempSync(join(tmpdir(), 'replix-bench-router-'));
const instance = await startChildServer(process.execPath, [FIXED, '--bytes', String(values.bytes)]);
const instancePort = Number(new URL(instance.url).port);
writeRoutesFile(dir, {
  version: 1,
  endpoints: new Map([
    ['bench', { port: 0, target: { instanceId: 'bench', backends: [instance.url] }, message: '' }],
  ]),
});
const router = spawn(process.execPath, [REPLIX, 'router', '--dir', dir, '--log-level', 'warn'], {
  cwd: dir,
  stdio: ['ignore', 'inherit', 'inherit'],
});
try {
  let adminPort = 0;
  while (adminPort === 0) {
    await new Promise((resolve) => setTimeout(resolve, 50));
    try {
      adminPort = Number(readFileSync(join(dir, 'admin-port'), 'utf8'));
    } catch {}
  }
  const status = (await (await fetch(`http://127.0.0.1:${adminPort}/status`)).json()) as {
    endpoints: { bench: { port: number } };
  };
  const endpointPort = status.endpoints.bench.port;
  const direct: number[] = [];
  const routed: number[] = [];
  for (let round = 0; round < rounds; round++) {
    direct.push(...(await latencies(instancePort, requests)));
    routed.push(...(await latencies(endpointPort, requests)));
  }
  const row = (path: string, times: number[]) => ({
    path,
    requests: times.length,
    'p50 µs': Math.round(percentile(times, 50)),
    'p99 µs': Math.round(percentile(times, 99)),
  });
  printTable('a query straight to the instance and through the endpoint router', [
    row('direct (instance port)', direct),
    row('endpoint router', routed),
  ]);
  const ratio = percentile(routed, 99) / percentile(direct, 99);
  console.log(`router p99 / direct p99: ${ratio.toFixed(2)}`);
} finally {
  router.kill('SIGTERM');
  await instance.stop();
  rmSync(dir, { recursive: true, force: true });
}
