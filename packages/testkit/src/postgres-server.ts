import { chownSync, mkdirSync, writeFileSync } from 'node:fs';
import { join } from 'node:path';
import pg from 'pg';
import { postgresBinaries } from './binaries.ts';
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
 * Starts PostgreSQL in `<runDir>/postgres` on a free port with `wal_level=logical` and room for
 * many replication slots, trust authentication for user `postgres`, and durability traded for
 * speed: it is a throwaway server. With `tls`, TLS is on and user `tls_only` may only connect
 * over it, with its password (a `hostssl` rule).
 */
export async function startPostgres(
  runDir: string,
  options: ServerOptions = {},
): Promise<DatabaseServer> {
  const binaries = postgresBinaries();
  const dir = join(runDir, 'postgres');
  const dataDir = join(dir, 'data');
  const runAs = unprivilegedUser(['postgres']);
  mkdirSync(dir, { recursive: true });
  if (runAs) chownSync(dir, runAs.uid, runAs.gid);
  await runToCompletion(
    binaries.initdb,
    ['-D', dataDir, '-U', 'postgres', '-A', 'trust', '-E', 'UTF8', '--locale=C', '--no-sync'],
    { dir, runAs },
  );
  const certificates = options.tls ? createTestCertificates(dir, runAs) : undefined;
  if (certificates) writeTlsHba(join(dataDir, 'pg_hba.conf'));
  const port = await freePort();
  const tlsSettings = certificates
    ? { ssl: 'on', ssl_cert_file: certificates.certFile, ssl_key_file: certificates.keyFile }
    : {};
  const settings = {
    listen_addresses: '127.0.0.1',
    unix_socket_directories: dir,
    wal_level: 'logical',
    max_replication_slots: '64',
    max_wal_senders: '64',
    max_connections: '300',
    fsync: 'off',
    synchronous_commit: 'off',
    full_page_writes: 'off',
    shared_buffers: '256MB',
    ...tlsSettings,
  };
  const args = ['-D', dataDir, '-p', String(port)];
  for (const [name, value] of Object.entries(settings)) args.push('-c', `${name}=${value}`);
  const launch = () => new ServerProcess(binaries.postgres, args, { dir, runAs });
  const url = `postgres://postgres@127.0.0.1:${port}/postgres`;
  const probe = async () => {
    const client = new pg.Client({ connectionString: url });
    await client.connect();
    await client.end();
  };
  let server = launch();
  await server.waitUntilReady(probe);
  if (certificates) {
    const admin = new pg.Client({ connectionString: url });
    await admin.connect();
    try {
      await admin.query(
        `CREATE ROLE ${TLS_ONLY_USER} LOGIN SUPERUSER REPLICATION PASSWORD '${TLS_ONLY_PASSWORD}'`,
      );
    } finally {
      await admin.end();
    }
  }
  return {
    engine: 'postgres',
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

/**
 * initdb's rules, with user `tls_only` first: over TLS with its password, otherwise refused.
 * Everyone else keeps trust authentication, with or without TLS.
 */
function writeTlsHba(path: string): void {
  writeFileSync(
    path,
    [
      'local all all trust',
      `hostssl all ${TLS_ONLY_USER} 127.0.0.1/32 scram-sha-256`,
      `hostssl replication ${TLS_ONLY_USER} 127.0.0.1/32 scram-sha-256`,
      `hostnossl all ${TLS_ONLY_USER} 127.0.0.1/32 reject`,
      `hostnossl replication ${TLS_ONLY_USER} 127.0.0.1/32 reject`,
      'host all all 127.0.0.1/32 trust',
      'host replication all 127.0.0.1/32 trust',
      '',
    ].join('\n'),
  );
}
