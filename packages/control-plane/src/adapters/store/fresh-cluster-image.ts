import { createHash } from 'node:crypto';
import {
  existsSync,
  mkdirSync,
  openAsBlob,
  readFileSync,
  renameSync,
  rmSync,
  statSync,
  writeFileSync,
} from 'node:fs';
import { homedir } from 'node:os';
import { dirname, join } from 'node:path';
import process from 'node:process';
import { fileURLToPath } from 'node:url';
import { PGlite, type PGliteOptions } from '@electric-sql/pglite';

/**
 * A new embedded store begins with PGlite's initdb: seconds of WebAssembly that make the same
 * files every time. The first store made on a machine keeps those files as an image in the
 * user's cache folder (`$XDG_CACHE_HOME/replix`, else `~/.cache/replix`), named by PGlite's
 * version; later new stores start from the image instead (well under a second). Migrations
 * still run on every store as before: the image is the bare cluster, nothing of ours.
 *
 * The folder is the user's own (mode 0700, checked): an image planted by someone else is
 * never loaded. Any failure to read or keep an image only costs the initdb it would have saved.
 */

/**
 * Where an image of PGlite's files lives (`fresh-cluster`, or a seeded cluster's name), or
 * nothing when there is no such place.
 */
function imagePath(name = 'fresh-cluster'): string | undefined {
  try {
    const cacheRoot = process.env.XDG_CACHE_HOME || join(homedir(), '.cache');
    return join(cacheRoot, 'replix', `pglite-${pgliteVersion()}-${name}.tar`);
  } catch {
    return undefined;
  }
}

function pgliteVersion(): string {
  // The package exports no package.json; it sits beside the dist folder its entry point is in.
  const entry = fileURLToPath(import.meta.resolve('@electric-sql/pglite'));
  const manifest = join(dirname(entry), '..', 'package.json');
  return (JSON.parse(readFileSync(manifest, 'utf8')) as { version: string }).version;
}

/** Whether `folder` is this user's alone: owned by them, nobody else may write or read it. */
function ownFolder(folder: string): boolean {
  const stat = statSync(folder);
  return stat.isDirectory() && stat.uid === process.getuid?.() && (stat.mode & 0o077) === 0;
}

/** The kept image at `path`, when there is one this user made. */
async function keptImage(path: string): Promise<Blob | undefined> {
  if (!existsSync(path)) return undefined;
  try {
    if (!ownFolder(dirname(path)) || statSync(path).uid !== process.getuid?.()) return undefined;
    // A Blob backed by the file, not a copy in memory: PGlite keeps the Blob it loaded a
    // cluster from for as long as the cluster is open (40 MB for the store, 65 MB for the demo).
    return await openAsBlob(path);
  } catch {
    return undefined;
  }
}

/** Keeps `pglite`'s files (just made by initdb, or just seeded) as the image at `path`. */
async function keepImage(pglite: PGlite, path: string): Promise<void> {
  try {
    mkdirSync(dirname(path), { recursive: true, mode: 0o700 });
    if (!ownFolder(dirname(path))) return;
    const image = await pglite.dumpDataDir('none');
    // Written whole under another name first: a reader never sees half an image.
    const partial = `${path}.${process.pid}.partial`;
    writeFileSync(partial, new Uint8Array(await image.arrayBuffer()), { mode: 0o600 });
    renameSync(partial, path);
  } catch {}
}

/**
 * PostgreSQL's memory settings for an embedded cluster, made for a store of a few thousand rows
 * and a demo shop rather than a server: PostgreSQL zeroes its shared buffers at start, inside
 * PGlite's WebAssembly memory, so the default 128 MB of them is 128 MB resident in the process
 * from the first second, for data that fits in a few. 16 MB (2,048 pages) still holds every
 * table of the store; a page beyond them is one read of a file the kernel caches.
 */
const EMBEDDED_SERVER_SETTINGS = ['shared_buffers = 16MB'];

/** `options` with the embedded memory settings added (a caller's own come after, and win). */
function withEmbeddedSettings(options: PGliteOptions): PGliteOptions {
  const own = options.postgresqlconf ?? [];
  return {
    ...options,
    postgresqlconf: [...EMBEDDED_SERVER_SETTINGS, ...(typeof own === 'string' ? [own] : own)],
  };
}

/**
 * PGlite in `folder` (in memory without one), with the embedded memory settings. A new cluster starts from the kept image, or
 * is made by initdb and kept as the image for the next.
 */
export async function createPglite(
  folder: string | undefined,
  given: PGliteOptions = {},
): Promise<PGlite> {
  const options = withEmbeddedSettings(given);
  const fresh = folder === undefined || !existsSync(join(folder, 'PG_VERSION'));
  const path = fresh ? imagePath() : undefined;
  const image = path ? await keptImage(path) : undefined;
  if (path && image) {
    try {
      return await PGlite.create(folder, { ...options, loadDataDir: image });
    } catch {
      // A damaged image: drop it (the next new store keeps a good one), and make this new
      // cluster the slow way.
      rmSync(path, { force: true });
      if (folder) rmSync(folder, { recursive: true, force: true });
    }
  }
  const pglite = await PGlite.create(folder, options);
  if (path) await keepImage(pglite, path);
  return pglite;
}

/**
 * A PGlite holding what `sql` makes and nothing else (the demo source's shop), in `folder`
 * (emptied first: every call starts from the seed) or in memory without one. On disk, the
 * cluster's files are the kernel's cache rather than the process's memory: some 65 MB for the
 * demo. Running the SQL is seconds of WebAssembly on every `replix start`, so the seeded cluster
 * is kept as an image too, named by a hash of the SQL: another SQL is another image, never a
 * stale one.
 */
export async function createSeededPglite(sql: string, folder?: string): Promise<PGlite> {
  const name = `seeded-${createHash('sha256').update(sql).digest('hex').slice(0, 16)}`;
  const path = imagePath(name);
  const image = path ? await keptImage(path) : undefined;
  if (folder) rmSync(folder, { recursive: true, force: true });
  if (path && image) {
    try {
      return await PGlite.create(folder, withEmbeddedSettings({ loadDataDir: image }));
    } catch {
      rmSync(path, { force: true });
      if (folder) rmSync(folder, { recursive: true, force: true });
    }
  }
  const pglite = await createPglite(folder);
  await pglite.exec(sql);
  if (path) {
    // The image is of the files on disk: the seed's writes are flushed to them first.
    await pglite.exec('CHECKPOINT');
    await keepImage(pglite, path);
  }
  return pglite;
}
