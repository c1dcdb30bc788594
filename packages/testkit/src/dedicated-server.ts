import type { DatabaseServer, ServerOptions } from './database-server.ts';
import { startMariaDb } from './mariadb-server.ts';
import { startPostgres } from './postgres-server.ts';
import { createRunDir, removeRunDir } from './run-dir.ts';

/**
 * A server of its own for a test that must stop, crash or restart it without disturbing the
 * run's shared servers. `stop()` also removes its folder; a test process that dies leaves it
 * for the next run's sweep. `tls` turns TLS on (see `ServerOptions`).
 */
export async function startDedicatedServer(
  engine: 'mariadb' | 'postgres',
  options: ServerOptions = {},
): Promise<DatabaseServer> {
  const runDir = createRunDir();
  try {
    const server =
      engine === 'mariadb'
        ? await startMariaDb(runDir, options)
        : await startPostgres(runDir, options);
    return {
      ...server,
      async stop() {
        await server.stop();
        removeRunDir(runDir);
      },
    };
  } catch (error) {
    removeRunDir(runDir);
    throw error;
  }
}
