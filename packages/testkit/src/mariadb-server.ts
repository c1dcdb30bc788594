import { chownSync, mkdirSync } from 'node:fs';
import { join } from 'node:path';
import mysql from 'mysql2/promise';
import { mariaDbBinaries } from './binaries.ts';
import {
  type DatabaseServer,
  type ServerOptions,
  TLS_ONLY_PASSWORD,
  TLS_ONLY_USER,
} from './database-server.ts';
import { freePort } from './free-port.ts';
import { runToCompletion, ServerProcess } from './server-process.ts';
import { unprivilegedUser } from './system-user.ts';
import { createTestCertificates } from './tls-certificates.ts';

/**
 * Starts MariaDB in `<runDir>/mariadb` on a free port with the binary log on in ROW format and
 * FULL row images, as change data capture needs (`binlog: false`: without one). Durability is traded for speed: it is a
 * throwaway server. With `tls`, TLS is on and user `tls_only` must use it (REQUIRE SSL).
 */
export async function startMariaDb(
  runDir: string,
  options: ServerOptions = {},
): Promise<DatabaseServer> {
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
  const certificates = options.tls ? createTestCertificates(dir, runAs) : undefined;
  const tlsArgs = certificates
    ? [
        `--ssl-ca=${certificates.caFile}`,
        `--ssl-cert=${certificates.certFile}`,
        `--ssl-key=${certificates.keyFile}`,
      ]
    : [];
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
        ...(options.binlog === false
          ? []
          : [
              `--log-bin=${join(dataDir, 'binlog')}`,
              '--binlog-format=ROW',
              '--binlog-row-image=FULL',
              '--server-id=1',
            ]),
        '--skip-name-resolve',
        '--character-set-server=utf8mb4',
        '--collation-server=utf8mb4_bin',
        '--innodb-buffer-pool-size=512M',
        '--innodb-flush-log-at-trx-commit=2',
        '--sync-binlog=0',
        '--max-connections=500',
        '--max-allowed-packet=64M',
        ...tlsArgs,
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
  if (certificates) {
    const admin = await mysql.createConnection({ host: '127.0.0.1', port, user: 'root' });
    try {
      await admin.query(
        `CREATE USER '${TLS_ONLY_USER}'@'%' IDENTIFIED BY '${TLS_ONLY_PASSWORD}' REQUIRE SSL`,
      );
      await admin.query(`GRANT ALL PRIVILEGES ON *.* TO '${TLS_ONLY_USER}'@'%'`);
    } finally {
      await admin.end();
    }
  }
  return {
    engine: 'mariadb',
    url,
    port,
    dir,
    tls: certificates
      ? { caFile: certificates.caFile, user: TLS_ONLY_USER, password: TLS_ONLY_PASSWORD }
      : undefined,
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
