/**
 * `npm run bench:footprint`: the memory Replix holds when idle (issue 31), as resident set
 * size (VmRSS), each measured in the same run as a bare Node.js process doing nothing, the
 * floor every Node process pays:
 *
 * - an idle instance of a small database: `replix serve` of a MariaDB database of 510 rows
 *   (goal ≤ 80 MB);
 * - `replix start` with its demo (the control plane and the demo source in one process;
 *   goal ≤ 400 MB), and the demo's instance and endpoint router, its child processes.
 *
 *   node bench/footprint.ts [--idle-seconds S]
 *
 * Each process is read after S seconds idle (default 30) past its ready line: V8 gives back
 * the heap a start grew only once its memory reducer has run, some seconds into idleness (read
 * after 5 s, the same processes measured up to 100 MB more, and varied by 30 MB from run to
 * run). Peak (VmHWM) is printed beside the current size.
 */
import { type ChildProcess, spawn } from 'node:child_process';
import { mkdtempSync, readFileSync, rmSync } from 'node:fs';
import { loadavg, tmpdir } from 'node:os';
import { join } from 'node:path';
import { setTimeout as sleep } from 'node:timers/promises';
import { fileURLToPath } from 'node:url';
import { parseArgs } from 'node:util';
import { mariaDbAdmin, startTestServers } from '@replix/testkit';
import { processesUnder } from '../packages/control-plane/src/adapters/drivers/process-identity.ts';
import { printTable } from './lib/report.ts';

const { values: args } = parseArgs({
  options: { 'idle-seconds': { type: 'string', default: '30' } },
});
const IDLE_MS = Number(args['idle-seconds']) * 1000;
const REPLIX_BIN = fileURLToPath(new URL('../packages/cli/bin/replix.js', import.meta.url));
const INSTANCE_GOAL_MB = 80;
const START_GOAL_MB = 400;

const log = (message: string) => console.error(`[bench:footprint] ${message}`);

/** VmRSS and VmHWM of a process, in MB. */
function memoryOf(pid: number): { rss: number; peak: number } {
  const status = readFileSync(`/proc/${pid}/status`, 'utf8');
  const kb = (field: string) =>
    Number(new RegExp(`^${field}:\\s+(\\d+) kB`, 'm').exec(status)?.[1]);
  return { rss: kb('VmRSS') / 1024, peak: kb('VmHWM') / 1024 };
}

/** Starts a process and resolves once its stdout holds `ready`. */
async function startUntil(
  args: string[],
  env: NodeJS.ProcessEnv,
  ready: (stdout: string) => boolean,
): Promise<{ child: ChildProcess; stdout: string }> {
  const child = spawn(process.execPath, args, { env, stdio: ['ignore', 'pipe', 'pipe'] });
  let stdout = '';
  let stderr = '';
  child.stderr?.on('data', (chunk: Buffer) => {
    stderr += chunk.toString();
  });
  await new Promise<void>((resolve, reject) => {
    child.stdout?.on('data', (chunk: Buffer) => {
      stdout += chunk.toString();
      if (ready(stdout)) resolve();
    });
    child.once('exit', (code) =>
      reject(new Error(`exited ${code} before it was ready:\n${stderr}`)),
    );
  });
  return { child, stdout };
}

async function stop(child: ChildProcess): Promise<void> {
  if (child.exitCode !== null) return;
  const exited = new Promise((resolve) => child.once('exit', resolve));
  child.kill('SIGINT');
  await exited;
}

const rows: Array<Record<string, string | number>> = [];
const row = (what: string, memory: { rss: number; peak: number }, bare: number, goal?: number) =>
  rows.push({
    process: what,
    'RSS MB': Math.round(memory.rss),
    'peak MB': Math.round(memory.peak),
    'x bare Node': Number((memory.rss / bare).toFixed(2)),
    'goal MB': goal ?? '',
    'goal held': goal === undefined ? '' : memory.rss <= goal ? 'yes' : 'no',
  });

const servers = await startTestServers();
const dataDir = mkdtempSync(join(tmpdir(), 'replix-bench-footprint-'));
try {
  // The floor: a Node process that loads nothing.
  const bare = spawn(process.execPath, ['-e', 'setInterval(() => {}, 1e6)']);
  await sleep(1000);
  const bareMemory = memoryOf(bare.pid as number);
  bare.kill();
  row('bare Node.js (baseline)', bareMemory, bareMemory.rss);

  log('an idle instance of a 510-row MariaDB database (replix serve)…');
  const source = await mariaDbAdmin(servers.mariadb.url).createDatabase(
    `CREATE TABLE item (id INT PRIMARY KEY, name VARCHAR(40) NOT NULL, price DECIMAL(10,2) NOT NULL);
     INSERT INTO item
       WITH RECURSIVE n(i) AS (SELECT 1 UNION ALL SELECT i + 1 FROM n WHERE i < 510)
       SELECT i, CONCAT('item ', i), i * 7.5 FROM n`,
  );
  const serve = await startUntil(
    [REPLIX_BIN, 'serve', '--source', source.url, '--port', '0', '--host', '127.0.0.1'],
    process.env,
    (stdout) => stdout.includes('\n'),
  );
  await sleep(IDLE_MS);
  row(
    'instance, 510 rows (replix serve)',
    memoryOf(serve.child.pid as number),
    bareMemory.rss,
    INSTANCE_GOAL_MB,
  );
  await stop(serve.child);

  log('replix start with its demo…');
  const start = await startUntil(
    [REPLIX_BIN, 'start'],
    {
      ...process.env,
      REPLIX_DATA_DIR: dataDir,
      REPLIX_API_PORT: '0',
      REPLIX_DEMO_PORT: '0',
    },
    (stdout) => stdout.includes('Ctrl-C stops it.'),
  );
  await sleep(IDLE_MS);
  const startPid = start.child.pid as number;
  row(
    'replix start (control plane + demo source)',
    memoryOf(startPid),
    bareMemory.rss,
    START_GOAL_MB,
  );
  for (const pid of processesUnder(dataDir).filter((pid) => pid !== startPid)) {
    const command = readFileSync(`/proc/${pid}/cmdline`, 'utf8').split('\0').join(' ');
    const what = command.includes('router') ? 'its endpoint router' : 'its demo instance';
    row(`${what} (child process)`, memoryOf(pid), bareMemory.rss);
  }
  await stop(start.child);
} finally {
  rmSync(dataDir, { recursive: true, force: true });
  await servers.stop();
}

printTable(`Idle footprint (load average ${loadavg()[0]?.toFixed(2)})`, rows);
