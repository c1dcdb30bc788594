import { spawn } from 'node:child_process';
import { mariaDbAdmin, startTestServers } from '@replix/testkit';
import { createBenchDataset } from './lib/dataset.ts';

const servers = await startTestServers();
const dataset = await createBenchDataset(mariaDbAdmin(servers.mariadb.url), {
  factRows: 10000,
  dimRows: 1000,
});
const child = spawn(
  'taskset',
  [
    '-c',
    '0',
    process.execPath,
    'packages/cli/bin/replix.js',
    'serve',
    '--source',
    dataset.database.url,
    '--port',
    process.env.PORT ?? '41010',
  ],
  {
    env: { ...process.env, REPLIX_LOG_LEVEL: 'warn', REPLIX_THREADS: '1' },
    stdio: ['ignore', 'pipe', 'inherit'],
  },
);
child.stdout.pipe(process.stdout);
process.on('SIGTERM', async () => {
  child.kill();
  await servers.stop();
  process.exit(0);
});
