import { PGLiteSocketServer } from '@electric-sql/pglite-socket';
import { createSeededPglite } from '@replix/control-plane';
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
export async function startDemoSource(listenPort = 0): Promise<DemoSource> {
  // An in-memory cluster holding the shop, from the image kept by the first start (no initdb
  // and no seeding on later starts).
  const db = await createSeededPglite(DEMO_DATASET_SQL);
  const server = new PGLiteSocketServer({
    db,
    host: '127.0.0.1',
    port: listenPort,
    maxConnections: 8,
  });
  await server.start();
  const port = Number(server.getServerConn().split(':').pop());
  return {
    url: `postgres://postgres@127.0.0.1:${port}/postgres`,
    async close() {
      await server.stop();
      await db.close();
    },
  };
}
