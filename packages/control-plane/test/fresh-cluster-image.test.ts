import {
  chmodSync,
  mkdirSync,
  mkdtempSync,
  readdirSync,
  readFileSync,
  rmSync,
  statSync,
  writeFileSync,
} from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import type { PGlite } from '@electric-sql/pglite';
import { sql } from 'kysely';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { createPglite, createSeededPglite } from '../src/adapters/store/fresh-cluster-image.ts';
import { openStore } from '../src/adapters/store/open-store.ts';

// Each test points the cache at a folder of its own (`XDG_CACHE_HOME`), so that what it finds
// there is what it put there.
const root = mkdtempSync(join(tmpdir(), 'replix-image-'));
const savedCacheHome = process.env.XDG_CACHE_HOME;
let cacheCount = 0;

function newCacheHome(): string {
  const home = join(root, `cache-${cacheCount++}`);
  process.env.XDG_CACHE_HOME = home;
  return home;
}

function imageFiles(home: string): string[] {
  try {
    return readdirSync(join(home, 'replix')).filter((name) => name.endsWith('.tar'));
  } catch {
    return [];
  }
}

/** Opens a store, proves it migrated and works, and closes it. */
async function useStore(location: Parameters<typeof openStore>[0]): Promise<void> {
  const store = await openStore(location);
  try {
    const { rows } = await sql<{ n: number }>`SELECT count(*)::int AS n FROM accounts`.execute(
      store.db,
    );
    expect(rows).toEqual([{ n: 0 }]);
  } finally {
    await store.close();
  }
}

/** The cache of the first store of the run, and the name its image was kept under. */
let firstHome: string;
let imageName: string;

beforeAll(async () => {
  firstHome = newCacheHome();
  await useStore({ inMemory: true });
  imageName = imageFiles(firstHome)[0] as string;
}, 120_000);

afterAll(() => {
  if (savedCacheHome === undefined) delete process.env.XDG_CACHE_HOME;
  else process.env.XDG_CACHE_HOME = savedCacheHome;
  rmSync(root, { recursive: true, force: true });
});

/** A new cache folder holding `content` where the image would be, in a folder of `mode`. */
function cacheHolding(content: string, mode: number): string {
  const home = newCacheHome();
  mkdirSync(join(home, 'replix'), { recursive: true, mode });
  chmodSync(join(home, 'replix'), mode);
  const path = join(home, 'replix', imageName);
  writeFileSync(path, content);
  return path;
}

describe('the fresh-cluster image of the embedded store', () => {
  it('is kept by the first new store, in a folder only its user may read, and used by the next', async () => {
    expect(imageName).toMatch(/^pglite-\d+\.\d+\.\d+-fresh-cluster\.tar$/);
    expect(statSync(join(firstHome, 'replix')).mode & 0o777).toBe(0o700);
    const path = join(firstHome, 'replix', imageName);
    expect(statSync(path).mode & 0o777).toBe(0o600);
    const kept = statSync(path).mtimeMs;

    // A new store in a data folder starts from it (and leaves it as it was); opened again, the
    // store is the one it made.
    process.env.XDG_CACHE_HOME = firstHome;
    const dataDir = join(root, 'data');
    mkdirSync(dataDir);
    await useStore({ dataDir });
    expect(statSync(path).mtimeMs).toBe(kept);
    expect(readFileSync(join(dataDir, 'store', 'PG_VERSION'), 'utf8')).toMatch(/^\d+/);
    await useStore({ dataDir });
  }, 120_000);

  it('is replaced when it is damaged, and the store is made without it', async () => {
    const goodSize = statSync(join(firstHome, 'replix', imageName)).size;
    const path = cacheHolding('not a tar file at all', 0o700);
    await useStore({ inMemory: true });
    expect(statSync(path).size).toBe(goodSize);
  }, 120_000);

  it('is never taken from a folder others may write', async () => {
    // A planted image (here, garbage) in a folder anyone may write: it is neither loaded nor
    // replaced; the store is made the slow way and works.
    const path = cacheHolding('planted', 0o777);
    await useStore({ inMemory: true });
    expect(readFileSync(path, 'utf8')).toBe('planted');
  }, 120_000);
});

describe('a seeded cluster (the demo source)', () => {
  const SEED = 'CREATE TABLE t (n int); INSERT INTO t SELECT generate_series(1, 1000);';
  const count = async (pglite: PGlite) =>
    (await pglite.query<{ n: number }>('SELECT count(*)::int AS n FROM t')).rows[0]?.n;

  it('is kept as an image named by its SQL, and the next one starts from it holding the same rows', async () => {
    process.env.XDG_CACHE_HOME = firstHome;
    const first = await createSeededPglite(SEED);
    expect(await count(first)).toBe(1000);
    await first.close();
    const seeded = imageFiles(firstHome).filter((name) => name.includes('-seeded-'));
    expect(seeded).toHaveLength(1);
    const path = join(firstHome, 'replix', seeded[0] as string);
    const kept = statSync(path).mtimeMs;

    const second = await createSeededPglite(SEED);
    expect(await count(second)).toBe(1000);
    // Writes go to the in-memory copy, never to the image.
    await second.exec('INSERT INTO t VALUES (0)');
    await second.close();
    expect(statSync(path).mtimeMs).toBe(kept);
    const third = await createSeededPglite(SEED);
    expect(await count(third)).toBe(1000);
    await third.close();

    // Another SQL is another image, not the first one's rows.
    const other = await createSeededPglite('CREATE TABLE t (n int); INSERT INTO t VALUES (1);');
    expect(await count(other)).toBe(1);
    await other.close();
    expect(imageFiles(firstHome).filter((name) => name.includes('-seeded-'))).toHaveLength(2);
  }, 120_000);
});

describe('memory settings of an embedded cluster', () => {
  const sharedBuffers = async (pglite: PGlite) =>
    (await pglite.query<{ shared_buffers: string }>('SHOW shared_buffers')).rows[0]?.shared_buffers;

  it('runs the store and a seeded cluster with 16 MB of shared buffers, not PostgreSQL’s 128 MB', async () => {
    process.env.XDG_CACHE_HOME = firstHome;
    const store = await createPglite(join(root, 'settings-store'));
    expect(await sharedBuffers(store)).toBe('16MB');
    await store.close();
    const seeded = await createSeededPglite('CREATE TABLE t (n int);');
    expect(await sharedBuffers(seeded)).toBe('16MB');
    await seeded.close();
  }, 120_000);

  it('keeps a seeded cluster given a folder on disk, emptied first: every start begins from the seed', async () => {
    process.env.XDG_CACHE_HOME = firstHome;
    const folder = join(root, 'seeded-on-disk');
    const seed = 'CREATE TABLE t (n int); INSERT INTO t SELECT generate_series(1, 10);';
    const first = await createSeededPglite(seed, folder);
    await first.exec('INSERT INTO t VALUES (0)');
    await first.close();
    expect(readdirSync(folder)).toContain('PG_VERSION');
    const second = await createSeededPglite(seed, folder);
    expect((await second.query<{ n: number }>('SELECT count(*)::int AS n FROM t')).rows[0]?.n).toBe(
      10,
    );
    await second.close();
  }, 120_000);
});
