import { createHash, randomUUID } from 'node:crypto';
import { mkdirSync, renameSync, rmSync, statSync } from 'node:fs';
import { dirname, join } from 'node:path';
import { artifactEntryPoint, sourceBuildHash } from '@replix/instance';
import { build, version as esbuildVersion } from 'esbuild';
import { artifactsRootFor } from './artifact-paths.ts';

/**
 * Bundled CommonJS dependencies (mysql2, pg, mssql, ssh2, fastify's plugins) use `require`,
 * `__filename` and `__dirname` (ssh2 at load time); an ES module has none of them, so the bundle
 * defines them.
 */
const COMMONJS_BANNER = [
  "import { createRequire as __replixCreateRequire } from 'node:module';",
  "import { dirname as __replixDirname } from 'node:path';",
  "import { fileURLToPath as __replixFileURLToPath } from 'node:url';",
  'const require = __replixCreateRequire(import.meta.url);',
  'const __filename = __replixFileURLToPath(import.meta.url);',
  'const __dirname = __replixDirname(__filename);',
].join('\n');

/**
 * Left out of the bundle: optional native add-ons, loaded only on request or inside try/catch
 * with a pure-JS fallback (pg's `pg.native`, ssh2's `cpu-features` and its compiled
 * `sshcrypto.node`); a `.node` binary cannot be bundled, and is built for one machine anyway.
 * Everything else, node_modules included, is in the bundle, so an artifact runs without this
 * repository.
 */
const EXTERNAL = ['pg-native', 'cpu-features', '*.node'];

export interface InstanceBundle {
  /** The bundled program; copy it, never change it. */
  readonly path: string;
  readonly cacheHit: boolean;
}

const building = new Map<string, Promise<InstanceBundle>>();

function exists(path: string): boolean {
  try {
    return statSync(path).isFile();
  } catch {
    return false;
  }
}

async function bundleInto(path: string): Promise<void> {
  const temporary = `${path}.${randomUUID()}.tmp`;
  try {
    const entry = artifactEntryPoint();
    await build({
      entryPoints: [entry],
      // Paths in the bundle's comments are relative to this: the repository root, so the
      // bundle (and its hash) does not depend on where the control plane was started.
      absWorkingDir: dirname(dirname(dirname(dirname(entry)))),
      outfile: temporary,
      bundle: true,
      platform: 'node',
      format: 'esm',
      target: 'node24',
      banner: { js: COMMONJS_BANNER },
      external: EXTERNAL,
      legalComments: 'none',
      logLevel: 'silent',
    });
    renameSync(temporary, path);
  } finally {
    rmSync(temporary, { force: true });
  }
}

/**
 * The engine's source hash, plus what else shapes the bundle (the bundler and its settings),
 * so a change to either makes a new bundle.
 */
function bundleCacheKey(): string {
  const settings = createHash('sha256')
    .update(JSON.stringify([esbuildVersion, COMMONJS_BANNER, EXTERNAL]))
    .digest('hex')
    .slice(0, 8);
  return `${sourceBuildHash()}-${settings}`;
}

/**
 * The instance program bundled with esbuild, cached per engine source hash as
 * `<source hash>-<settings hash>.mjs` in `cacheDir` (REPLIX_BUNDLE_CACHE_DIR), by default
 * `<dataDir>/artifacts/.bundle-cache`: builds of the same engine share one bundle (and so one
 * build hash) and bundle only once. A folder shared by control planes of one installation
 * (the test suite's) bundles once for all of them.
 */
export function instanceBundle(
  dataDir: string,
  cacheDir = join(artifactsRootFor(dataDir), '.bundle-cache'),
): Promise<InstanceBundle> {
  const path = join(cacheDir, `${bundleCacheKey()}.mjs`);
  const pending = building.get(path);
  if (pending) return pending.then((bundle) => ({ ...bundle, cacheHit: true }));
  if (exists(path)) return Promise.resolve({ path, cacheHit: true });
  const made = (async () => {
    mkdirSync(cacheDir, { recursive: true, mode: 0o700 });
    await bundleInto(path);
    return { path, cacheHit: false };
  })().finally(() => building.delete(path));
  building.set(path, made);
  return made;
}
