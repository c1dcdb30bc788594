import { join } from 'node:path';
import type { PGlite } from '@electric-sql/pglite';
import { Kysely, PGliteDialect, PostgresDialect, sql } from 'kysely';
import pg from 'pg';
import { lockDataFolder } from './data-folder-lock.ts';
import { createPglite } from './fresh-cluster-image.ts';
import { migrateToLatest } from './migrations.ts';
import type { Store } from './schema.ts';

export type StoreDb = Kysely<Store>;

export interface StoreLocation {
  /** `postgres://…`: a PostgreSQL server. Without it, PGlite in `dataDir`. */
  readonly databaseUrl?: string | undefined;
  /** The data folder; the embedded store lives in its `store/` folder. */
  readonly dataDir?: string | undefined;
  /** PGlite only: keep the store in memory (tests). */
  readonly inMemory?: boolean;
}

export interface OpenStore {
  readonly db: StoreDb;
  readonly kind: 'postgres' | 'pglite';
  close(): Promise<void>;
}

// Counts and bigint ids read as numbers in the JSON we serve; they stay far below 2^53.
pg.types.setTypeParser(pg.types.builtins.INT8, (text) => Number(text));

/** Opens the store (PostgreSQL server or embedded PGlite) and migrates it to the latest schema. */
export async function openStore(location: StoreLocation): Promise<OpenStore> {
  if (location.databaseUrl) {
    const pool = new pg.Pool({ connectionString: location.databaseUrl, max: 10 });
    // A server that ends a connection between queries (restart, failover, a forced drop while
    // the pool closes) must not crash the process: the pool replaces the connection, and a
    // query that was running on it fails on its own promise.
    pool.on('error', () => {});
    pool.on('connect', (client) => client.on('error', () => {}));
    const db = new Kysely<Store>({ dialect: new PostgresDialect({ pool }) });
    await migrateToLatest(db as Kysely<unknown>);
    return { db, kind: 'postgres', close: () => db.destroy() };
  }
  let unlock = () => {};
  let folder: string | undefined;
  if (!location.inMemory) {
    if (!location.dataDir) throw new Error('The embedded store needs a data folder.');
    unlock = lockDataFolder(location.dataDir);
    folder = join(location.dataDir, 'store');
  }
  let pglite: PGlite;
  try {
    pglite = await createPglite(folder, { parsers: { 20: (text: string) => Number(text) } });
  } catch (error) {
    unlock();
    throw error;
  }
  const db = new Kysely<Store>({ dialect: new PGliteDialect({ pglite }) });
  try {
    await migrateToLatest(db as Kysely<unknown>);
  } catch (error) {
    await db.destroy();
    unlock();
    throw error;
  }
  return {
    db,
    kind: 'pglite',
    async close() {
      await db.destroy();
      unlock();
    },
  };
}

/** A trivial query: it settles when the store answers (a probe's check, the status's latency). */
export async function pingStore(db: StoreDb): Promise<void> {
  await sql`SELECT 1`.execute(db);
}
