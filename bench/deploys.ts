/**
 * `npm run bench:deploys`: the demo that `npm start` runs, under a steady 20 queries/s on its
 * endpoint, through redeploy, resize, reconfigure and rebuild, driven through the public API as a
 * user would. Prints, per action, the switch-over time (action call → a new instance serves) and
 * the time until the database is `running` again, then every query's outcome: how many failed,
 * how many answered something other than the first answer, and whether the URL moved.
 */
import { type ChildProcess, execFileSync, spawn } from 'node:child_process';
import { mkdtempSync, rmSync } from 'node:fs';
import { loadavg, tmpdir } from 'node:os';
import { dirname, join } from 'node:path';
import { fileURLToPath } from 'node:url';
import { parseArgs } from 'node:util';
import { freePort } from '@replix/testkit';
import { printTable } from './lib/report.ts';

const { values: args } = parseArgs({
  options: { 'queries-per-second': { type: 'string', default: '20' } },
});
const INTERVAL_MS = 1000 / Number(args['queries-per-second']);
const ROOT = fileURLToPath(new URL('../', import.meta.url));
const BIN = join(ROOT, 'packages/cli/bin/replix.js');
const QUERY = 'customers { id name orders { id placed_on } } ORDER BY id LIMIT 3';
const DEMO_EMAIL = 'demo@replix.local';

const sleep = (ms: number) => new Promise((resolve) => setTimeout(resolve, ms));

interface Answer {
  readonly status: number;
  readonly body: string;
}

/** `replix start` in a fresh data folder on free ports; resolves with its banner. */
async function startDemo(env: NodeJS.ProcessEnv): Promise<{ child: ChildProcess; banner: string }> {
  const child = spawn(process.execPath, [BIN, 'start'], {
    env,
    cwd: ROOT,
    stdio: ['ignore', 'pipe', 'inherit'],
  });
  const banner = await new Promise<string>((resolve, reject) => {
    let output = '';
    child.stdout?.on('data', (chunk: Buffer) => {
      output += chunk.toString();
      if (output.includes('Ctrl-C stops it.')) resolve(output);
    });
    child.once('exit', (code) => reject(new Error(`replix start exited with ${code}`)));
  });
  return { child, banner };
}

function bannerValue(banner: string, label: string): string {
  const match = new RegExp(`^\\s+${label}\\s+(\\S+)`, 'm').exec(banner);
  if (!match?.[1]) throw new Error(`The banner has no ${label}.`);
  return match[1];
}

async function main(): Promise<void> {
  const [apiPort, demoPort] = [await freePort(), await freePort()];
  const dataDir = mkdtempSync(join(tmpdir(), 'replix-bench-deploys-'));
  const env: NodeJS.ProcessEnv = {
    ...process.env,
    PATH: `${dirname(process.execPath)}:${process.env.PATH}`,
    REPLIX_DATA_DIR: dataDir,
    REPLIX_API_PORT: String(apiPort),
    REPLIX_DEMO_PORT: String(demoPort),
    REPLIX_LOG_LEVEL: 'warn',
  };
  const { child, banner } = await startDemo(env);
  try {
    const instanceUrl = bannerValue(banner, 'demo instance');
    const apiKey = bannerValue(banner, 'API key');
    const api = `http://127.0.0.1:${apiPort}/v1`;
    const token = execFileSync(process.execPath, [BIN, 'token', '--email', DEMO_EMAIL], {
      env,
      encoding: 'utf8',
    }).trim();
    const call = async (method: string, path: string, body?: unknown) => {
      const response = await fetch(`${api}${path}`, {
        method,
        headers: {
          authorization: `Bearer ${token}`,
          ...(body === undefined ? {} : { 'content-type': 'application/json' }),
        },
        body: body === undefined ? undefined : JSON.stringify(body),
      });
      const text = await response.text();
      if (!response.ok) throw new Error(`${method} ${path}: ${response.status} ${text}`);
      return JSON.parse(text) as Record<string, unknown>;
    };
    const databases = (await call('GET', '/databases')) as unknown as Array<{
      id: string;
      name: string;
    }>;
    const database = databases.find((item) => item.name === 'demo');
    if (!database) throw new Error('The demo database is missing.');
    const view = async () =>
      (await call('GET', `/databases/${database.id}/instance`)) as {
        database: { status: string; endpointUrl: string | null; goal?: unknown };
        instance: { id: string; buildId: string } | null;
      };

    const ask = (): Promise<Answer> =>
      fetch(`${instanceUrl}/query?q=${encodeURIComponent(QUERY)}`, {
        headers: { authorization: `Bearer ${apiKey}` },
      }).then(
        async (response) => {
          const body = (await response.json()) as { data?: unknown };
          return { status: response.status, body: JSON.stringify(body.data ?? body) };
        },
        (error: unknown) => ({ status: 0, body: String(error) }),
      );
    const expected = await ask();
    if (expected.status !== 200) throw new Error(`The demo does not answer: ${expected.body}`);

    const answers: Promise<Answer>[] = [];
    const timer = setInterval(() => answers.push(ask()), INTERVAL_MS);
    const rows: Array<Record<string, string | number>> = [];
    const current = await view();
    const actions: Array<[string, Record<string, string> | undefined]> = [
      ['redeploy', { buildId: current.instance?.buildId ?? '' }],
      ['resize', { instanceSize: 's' }],
      ['reconfigure', undefined],
      ['rebuild', undefined],
    ];
    for (const [action, body] of actions) {
      const before = (await view()).instance?.id;
      const started = performance.now();
      await call('POST', `/databases/${database.id}/${action}`, body);
      let switchedMs = Number.NaN;
      for (;;) {
        const now = await view();
        if (Number.isNaN(switchedMs) && now.instance && now.instance.id !== before) {
          switchedMs = performance.now() - started;
        }
        if (!Number.isNaN(switchedMs) && now.database.status === 'running') break;
        if (now.database.status === 'failed') throw new Error(`${action} failed`);
        await sleep(100);
      }
      rows.push({
        action,
        'switch-over s': switchedMs / 1000,
        'running again s': (performance.now() - started) / 1000,
        'URL unchanged': (await view()).database.endpointUrl === instanceUrl ? 'yes' : 'NO',
      });
    }
    clearInterval(timer);
    const all = await Promise.all(answers);
    const failed = all.filter((answer) => answer.status !== 200);
    const different = all.filter(
      (answer) => answer.status === 200 && answer.body !== expected.body,
    );
    printTable(
      `The demo's endpoint under ${args['queries-per-second']} queries/s (load average ${loadavg()[0]?.toFixed(2)})`,
      rows,
    );
    printTable('Queries during the four actions', [
      { queries: all.length, failed: failed.length, 'other answer': different.length },
    ]);
    for (const answer of failed.slice(0, 5)) console.log(`failed: ${answer.status} ${answer.body}`);
    process.exitCode = failed.length + different.length === 0 ? 0 : 1;
  } finally {
    child.kill('SIGINT');
    await new Promise((resolve) => child.once('exit', resolve));
    rmSync(dataDir, { recursive: true, force: true });
  }
}

await main();
