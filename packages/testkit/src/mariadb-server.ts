import { chownSync, mkdirSync } from 'node:fs';
import { join } from 'node:path';
import mysql from 'mysql2/promise';
import { mariaDbBinaries } from './binaries.ts';
import type { DatabaseServer } from './database-server.ts';
import { freePort } from './free-port.ts';
import { runToCompletion, ServerProcess } from './server-process.ts';
import { unprivilegedUser } from './system-user.ts';

/**
 * Starts MariaDB in `<runDir>/mariadb` on a free port with the binary log on in ROW format and
 * FULL row images, as change data capture needs. Durability is traded for speed: it is a
 * throwaway server.
 */
export async function startMariaDb(runDir: string): Promise<DatabaseServer> {
  const binaries = mariaDbBinaries();
  const dir = join(runDir, 'mariadb');
  const dataDir = join(dir, 'data');
  const runAs = unprivilegedUser(['mysql']);
  mkdirSync(join(dir, 'tmp'), { recursive: true });
  if (runAs) {
    chownSync(dir, runAs.uid, runAs.gid);
    chownSync(join(dir, 'tmp'), runAs.uid, runAs.gid);
  }
  await runToCompletion(
    binaries.installDb,
    [
      '--no-defaults',
      `--datadir=${dataDir}`,
      '--auth-root-authentication-method=normal',
      '--skip-test-db',
      '--skip-name-resolve',
    ],
    { dir, runAs },
  );
  const port = await freePort();
  const launch = () =>
    new ServerProcess(
      binaries.server,
      [
        '--no-defaults',
        `--datadir=${dataDir}`,
        `--port=${port}`,
        '--bind-address=127.0.0.1',
        `--socket=${join(dir, 'mysqld.sock')}`,
        `--pid-file=${join(dir, 'mysqld.pid')}`,
        `--tmpdir=${join(dir, 'tmp')}`,
        `--log-bin=${join(dataDir, 'binlog')}`,
        '--binlog-format=ROW',
        '--binlog-row-image=FULL',
        '--server-id=1',
        '--skip-name-resolve',
        '--character-set-server=utf8mb4',
        '--collation-server=utf8mb4_bin',
        '--innodb-buffer-pool-size=512M',
        '--innodb-flush-log-at-trx-commit=2',
        '--sync-binlog=0',
        '--max-connections=500',
        '--max-allowed-packet=64M',
      ],
      { dir, runAs },
    );
  const url = `mysql://root@127.0.0.1:${port}`;
  const probe = async () => {
    const connection = await mysql.createConnection({ host: '127.0.0.1', port, user: 'root' });
    await connection.end();
  };
  let server = launch();
  await server.waitUntilReady(probe);
  return {
    engine: 'mariadb',
    url,
    port,
    dir,
    stop: () => server.stop(),
    killNow: () => server.killNow(),
    async restart({ crash = false } = {}) {
      if (crash) {
        server.killNow();
        await server.stop();
      } else await server.stop();
      server = launch();
      await server.waitUntilReady(probe);
    },
  };
}
