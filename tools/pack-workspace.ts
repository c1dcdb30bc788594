// What the pack tool (tools/pack-packages.ts) reads from the repository: the workspace's packages,
// the versions the lock file pins, and `npm pack` of a staged folder.
import { execFileSync } from 'node:child_process';
import { readdirSync, readFileSync } from 'node:fs';
import { join, resolve } from 'node:path';

export const REPOSITORY_ROOT = resolve(import.meta.dirname, '..');

export interface WorkspacePackage {
  readonly name: string;
  /** The package's folder, absolute. */
  readonly dir: string;
  readonly manifest: {
    readonly version: string;
    readonly description?: string;
    readonly dependencies?: Record<string, string>;
    readonly exports?: Record<string, string>;
    readonly bin?: Record<string, string>;
  };
}

/** Every package under `packages/`, by name. */
export function workspacePackages(root = REPOSITORY_ROOT): Map<string, WorkspacePackage> {
  const found = new Map<string, WorkspacePackage>();
  for (const entry of readdirSync(join(root, 'packages'), { withFileTypes: true })) {
    if (!entry.isDirectory()) continue;
    const dir = join(root, 'packages', entry.name);
    let manifest: WorkspacePackage['manifest'] & { name: string };
    try {
      manifest = JSON.parse(readFileSync(join(dir, 'package.json'), 'utf8'));
    } catch {
      continue;
    }
    found.set(manifest.name, { name: manifest.name, dir, manifest });
  }
  return found;
}

/** The package a bare import specifier names: `@scope/name` or `name`, without a subpath. */
export function packageNameOf(specifier: string): string {
  const parts = specifier.split('/');
  return specifier.startsWith('@') ? parts.slice(0, 2).join('/') : (parts[0] as string);
}

/**
 * The version of `name` that `npm ci` installs at the top of node_modules: what the workspace is
 * tested with, so a packed package depends on exactly that.
 */
export function lockedVersion(name: string, root = REPOSITORY_ROOT): string {
  const lock = JSON.parse(readFileSync(join(root, 'package-lock.json'), 'utf8')) as {
    packages: Record<string, { version?: string; link?: boolean }>;
  };
  const version = lock.packages[`node_modules/${name}`]?.version;
  if (!version) throw new Error(`package-lock.json has no top-level ${name}`);
  return version;
}

/** `npm pack` of a staged package folder into `outDir`; returns the tarball's path. */
export function npmPack(stagedDir: string, outDir: string): string {
  const output = execFileSync(
    'npm',
    ['pack', '--json', '--ignore-scripts', '--pack-destination', outDir],
    { cwd: stagedDir, encoding: 'utf8', stdio: ['ignore', 'pipe', 'pipe'] },
  );
  const [packed] = JSON.parse(output) as { filename: string }[];
  if (!packed) throw new Error(`npm pack of ${stagedDir} printed no tarball`);
  return join(outDir, packed.filename);
}
