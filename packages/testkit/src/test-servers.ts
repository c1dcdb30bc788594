import { performance } from 'node:perf_hooks';
import process from 'node:process';
import type { DatabaseServer } from './database-server.ts';
import { startMariaDb } from './mariadb-server.ts';
import { startPostgres } from './postgres-server.ts';
import { createRunDir, removeRunDir } from './run-dir.ts';

export interface TestServers {
  readonly mariadb: DatabaseServer;
  readonly postgres: DatabaseServer;
  readonly startupMs: number;
  stop(): Promise<void>;
}

/**
 * Starts a MariaDB and a PostgreSQL server side by side in one fresh run folder, and makes sure
 * they die with this process: on a normal exit, on Ctrl-C and on SIGTERM. A run killed outright
 * (SIGKILL) is swept by the next run (see run-dir.ts).
 */
export async function startTestServers(): Promise<TestServers> {
  const started = performance.now();
  const runDir = createRunDir();
  const servers: DatabaseServer[] = [];
  const killAll = () => {
    for (const server of servers) server.killNow();
    removeRunDir(runDir);
  };
  const onSignal = (signal: NodeJS.Signals) => {
    killAll();
    process.kill(process.pid, signal);
  };
  process.once('exit', killAll);
  process.once('SIGINT', onSignal);
  process.once('SIGTERM', onSignal);
  const forget = () => {
    process.off('exit', killAll);
    process.off('SIGINT', onSignal);
    process.off('SIGTERM', onSignal);
  };

  const results = await Promise.allSettled([startMariaDb(runDir), startPostgres(runDir)]);
  for (const result of results) if (result.status === 'fulfilled') servers.push(result.value);
  const failure = results.find((result) => result.status === 'rejected');
  if (failure) {
    await Promise.all(servers.map((server) => server.stop()));
    removeRunDir(runDir);
    forget();
    throw failure.reason;
  }
  const [mariadb, postgres] = servers as [DatabaseServer, DatabaseServer];
  return {
    mariadb,
    postgres,
    startupMs: Math.round(performance.now() - started),
    async stop() {
      await Promise.all(servers.map((server) => server.stop()));
      removeRunDir(runDir);
      forget();
    },
  };
}
