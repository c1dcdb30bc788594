// The `replix` command as one installable package, `@replix/cli`: the CLI and every internal
// package it imports (found by following `@replix/*` dependencies), each TypeScript file compiled
// to a JavaScript file at the same place (`packages/<name>/src/…`), so that what the code finds
// beside itself at run time is still there: worker threads and programs started by file URL
// (query threads, load workers, the process driver's `replix` bin, the Kubernetes programs) and
// the artifact entry point the builder bundles. Imports are rewritten (`.ts` → `.js`,
// `@replix/x` → a relative path); packages from the registry stay imports and become the
// package's dependencies, at the versions the lock file pins. The dashboard comes as its built
// app only. A new entry point, worker or program needs nothing here as long as it lives in
// `src/` of a carried package and is started through `new URL('./file.ts', import.meta.url)`.
import { cpSync, existsSync, mkdirSync, readdirSync, readFileSync, writeFileSync } from 'node:fs';
import { dirname, join, relative, sep } from 'node:path';
import { build, type Plugin } from 'esbuild';
import {
  lockedVersion,
  npmPack,
  packageNameOf,
  REPOSITORY_ROOT,
  type WorkspacePackage,
} from './pack-workspace.ts';

/** Workspace packages the CLI carries as built files, not code: the folders it copies. */
const ASSET_PACKAGES: Readonly<Record<string, readonly string[]>> = {
  '@replix/dashboard': ['dist'],
};

/** Where each carried package's code is: its sources, and the CLI's bin. */
const CODE_FOLDERS = ['src', 'bin'];

/** The CLI and the internal packages it depends on, directly or not. */
export function carriedPackages(
  cli: WorkspacePackage,
  packages: Map<string, WorkspacePackage>,
): WorkspacePackage[] {
  const carried = new Map<string, WorkspacePackage>();
  const visit = (pkg: WorkspacePackage) => {
    if (carried.has(pkg.name)) return;
    carried.set(pkg.name, pkg);
    // An asset package's own dependencies are built into its files.
    if (pkg.name in ASSET_PACKAGES) return;
    for (const name of Object.keys(pkg.manifest.dependencies ?? {})) {
      const internal = packages.get(name);
      if (internal) visit(internal);
    }
  };
  visit(cli);
  return [...carried.values()];
}

function codeFiles(dir: string): string[] {
  if (!existsSync(dir)) return [];
  return readdirSync(dir, { withFileTypes: true }).flatMap((entry) => {
    const path = join(dir, entry.name);
    if (entry.isDirectory()) return codeFiles(path);
    return /\.(ts|js)$/.test(entry.name) && !entry.name.endsWith('.d.ts') ? [path] : [];
  });
}

function asRelativeSpecifier(fromDir: string, file: string): string {
  const path = relative(fromDir, file).split(sep).join('/');
  return path.startsWith('.') ? path : `./${path}`;
}

/**
 * A file started or read through `new URL('./x.ts', import.meta.url)` is `./x.js` in the
 * package, like every compiled file.
 */
export function compiledFileUrls(source: string): string {
  return source.replace(
    /new URL\(\s*(['"])(\.{1,2}\/[^'"]+)\.ts\1(\s*,\s*import\.meta\.url\s*\))/g,
    'new URL($1$2.js$1$3',
  );
}

/**
 * Keeps every import an import (each file compiles to one file), pointing at the compiled file,
 * and records which registry packages the code imports.
 */
function rewriteImports(
  carried: Map<string, WorkspacePackage>,
  registryImports: Map<string, string>,
): Plugin {
  const internalFile = (specifier: string, importer: string): string => {
    const name = packageNameOf(specifier);
    const pkg = carried.get(name);
    if (!pkg || name in ASSET_PACKAGES)
      throw new Error(`${importer} imports ${specifier}, which the CLI does not carry as code`);
    const subpath = `.${specifier.slice(name.length)}`;
    const target = pkg.manifest.exports?.[subpath];
    if (!target) throw new Error(`${importer} imports ${specifier}, which ${name} does not export`);
    return join(pkg.dir, target);
  };
  return {
    name: 'replix-rewrite-imports',
    setup(builder) {
      builder.onResolve({ filter: /.*/ }, (args) => {
        if (args.kind === 'entry-point') return undefined;
        const specifier = args.path;
        if (specifier.startsWith('node:')) return { path: specifier, external: true };
        if (specifier.startsWith('.')) {
          if (!existsSync(join(args.resolveDir, specifier)))
            throw new Error(`${args.importer} imports ${specifier}, which does not exist`);
          return { path: specifier.replace(/\.ts$/, '.js'), external: true };
        }
        if (specifier.startsWith('@replix/')) {
          const file = internalFile(specifier, args.importer);
          const path = asRelativeSpecifier(dirname(args.importer), file).replace(/\.ts$/, '.js');
          return { path, external: true };
        }
        registryImports.set(packageNameOf(specifier), args.importer);
        return { path: specifier, external: true };
      });
      builder.onLoad({ filter: /\.ts$/ }, (args) => ({
        contents: compiledFileUrls(readFileSync(args.path, 'utf8')),
        loader: 'ts',
      }));
    },
  };
}

/**
 * The package's dependencies: what the carried packages declare from the registry, at the
 * lock file's versions. Every package the code imports must be among them.
 */
function registryDependencies(
  carried: WorkspacePackage[],
  registryImports: Map<string, string>,
): Record<string, string> {
  const declared = new Set<string>();
  for (const pkg of carried) {
    if (pkg.name in ASSET_PACKAGES) continue;
    for (const name of Object.keys(pkg.manifest.dependencies ?? {}))
      if (!name.startsWith('@replix/')) declared.add(name);
  }
  for (const [name, importer] of registryImports) {
    if (!declared.has(name))
      throw new Error(`${importer} imports ${name}, which no carried package.json declares`);
  }
  return Object.fromEntries([...declared].sort().map((name) => [name, lockedVersion(name)]));
}

export async function packCli(
  packages: Map<string, WorkspacePackage>,
  stagingDir: string,
  outDir: string,
): Promise<string> {
  const cli = packages.get('@replix/cli');
  if (!cli) throw new Error('no @replix/cli in packages/');
  const staged = join(stagingDir, 'cli');
  mkdirSync(staged, { recursive: true });
  const carried = carriedPackages(cli, packages);
  const code = carried.filter((pkg) => !(pkg.name in ASSET_PACKAGES));
  const registryImports = new Map<string, string>();
  await build({
    entryPoints: code.flatMap((pkg) => CODE_FOLDERS.flatMap((f) => codeFiles(join(pkg.dir, f)))),
    outbase: REPOSITORY_ROOT,
    outdir: staged,
    bundle: true,
    platform: 'node',
    format: 'esm',
    target: 'node24',
    plugins: [rewriteImports(new Map(carried.map((pkg) => [pkg.name, pkg])), registryImports)],
    legalComments: 'inline',
    logLevel: 'warning',
  });
  for (const pkg of carried) {
    for (const folder of ASSET_PACKAGES[pkg.name] ?? []) {
      const from = join(pkg.dir, folder);
      if (!existsSync(from)) throw new Error(`${pkg.name} has no ${folder}: build it first`);
      cpSync(from, join(staged, relative(REPOSITORY_ROOT, from)), { recursive: true });
    }
  }
  const bin = Object.fromEntries(
    Object.entries(cli.manifest.bin ?? {}).map(([command, path]) => [
      command,
      relative(REPOSITORY_ROOT, join(cli.dir, path)).split(sep).join('/'),
    ]),
  );
  const manifest = {
    name: cli.name,
    version: cli.manifest.version,
    description: cli.manifest.description,
    type: 'module',
    bin,
    files: ['packages'],
    // The instance and the control plane run on Node.js 24 (worker threads, type stripping of
    // the Kubernetes programs aside, the engine's use of newer built-ins).
    engines: { node: '>=24' },
    dependencies: registryDependencies(carried, registryImports),
  };
  writeFileSync(join(staged, 'package.json'), `${JSON.stringify(manifest, null, 2)}\n`);
  return npmPack(staged, outDir);
}
