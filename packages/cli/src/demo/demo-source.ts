import { join } from 'node:path';
import { PGLiteSocketServer } from '@electric-sql/pglite-socket';
import { createSeededPglite, lockDataFolder } from '@replix/control-plane';
import { DEMO_DATASET_SQL } from './demo-dataset.ts';

export interface DemoSource {
  /** A postgres:// URL any Postgres client (and so Replix) can connect to. */
  readonly url: string;
  close(): Promise<void>;
}

/**
 * An embedded PostgreSQL (PGlite, WebAssembly) holding the demo dataset, reachable over the
 * Postgres wire protocol on a loopback port, so the demo needs nothing but Node installed.
 */
export async function startDemoSource(dataDir: string, listenPort = 0): Promise<DemoSource> {
  // A new cluster holding the shop on every start, from the image kept by the first start (no
  // initdb and no seeding on later starts), in the data folder's `demo-source` (locked: another
  // start on the same data folder must not empty it under this one).
  const folder = join(dataDir, 'demo-source');
  const unlock = lockDataFolder(folder);
  let db: Awaited<ReturnType<typeof createSeededPglite>>;
  try {
    db = await createSeededPglite(DEMO_DATASET_SQL, join(folder, 'cluster'));
  } catch (error) {
    unlock();
    throw error;
  }
  const server = new PGLiteSocketServer({
    db,
    host: '127.0.0.1',
    port: listenPort,
    maxConnections: 8,
  });
  try {
    await server.start();
  } catch (error) {
    await db.close();
    unlock();
    throw error;
  }
  const port = Number(server.getServerConn().split(':').pop());
  return {
    url: `postgres://postgres@127.0.0.1:${port}/postgres`,
    async close() {
      await server.stop();
      await db.close();
      unlock();
    },
  };
}
