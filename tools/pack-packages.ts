// `npm run pack`: writes the installable tarballs of `@replix/sdk` (tools/pack-sdk.ts) and of
// the CLI, `@replix/cli` (tools/pack-cli.ts), into dist/packages/, and prints their paths.
// An app installs the SDK with `npm install <sdk tarball>`; the `replix` command comes with
// `npm install <cli tarball>` (docs/cli.md).
import { mkdirSync, mkdtempSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join, resolve } from 'node:path';
import { ensureDashboard } from './ensure-dashboard.ts';
import { packCli } from './pack-cli.ts';
import { packSdk } from './pack-sdk.ts';
import { REPOSITORY_ROOT, workspacePackages } from './pack-workspace.ts';

export const PACKAGES_DIR = join(REPOSITORY_ROOT, 'dist/packages');

export interface PackedTarballs {
  readonly sdk: string;
  readonly cli: string;
}

export async function packPackages(outDir = PACKAGES_DIR): Promise<PackedTarballs> {
  rmSync(outDir, { recursive: true, force: true });
  mkdirSync(outDir, { recursive: true });
  // The CLI carries the built dashboard.
  ensureDashboard();
  const packages = workspacePackages();
  const sdk = packages.get('@replix/sdk');
  if (!sdk) throw new Error('no @replix/sdk in packages/');
  // Staged outside the repository: nothing of the workspace (ignore files, node_modules) is seen.
  const staging = mkdtempSync(join(tmpdir(), 'replix-pack-'));
  try {
    return {
      sdk: packSdk(sdk, staging, outDir),
      cli: await packCli(packages, staging, outDir),
    };
  } finally {
    rmSync(staging, { recursive: true, force: true });
  }
}

if (import.meta.main) {
  // `--out <dir>`: somewhere else than dist/packages (the tests pack into folders of their own).
  const out = process.argv.indexOf('--out');
  const packed = await packPackages(out > 0 ? resolve(process.argv[out + 1] ?? '') : undefined);
  process.stdout.write(`${packed.sdk}\n${packed.cli}\n`);
}
