import { chownSync, mkdirSync } from 'node:fs';
import { join } from 'node:path';
import pg from 'pg';
import { postgresBinaries } from './binaries.ts';
import type { DatabaseServer } from './database-server.ts';
import { freePort } from './free-port.ts';
import { runToCompletion, ServerProcess } from './server-process.ts';
import { unprivilegedUser } from './system-user.ts';

/**
 * Starts PostgreSQL in `<runDir>/postgres` on a free port with `wal_level=logical` and room for
 * many replication slots, trust authentication for user `postgres`, and durability traded for
 * speed: it is a throwaway server.
 */
export async function startPostgres(runDir: string): Promise<DatabaseServer> {
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
  const port = await freePort();
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
  return {
    engine: 'postgres',
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
