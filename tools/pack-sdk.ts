// `@replix/sdk` as an app installs it: the TypeScript sources compiled by tsc to ESM JavaScript
// with .d.ts types (packages/sdk/tsconfig.build.json: ES2022 and the DOM, so Node.js 20+ and
// browsers), no dependencies. The workspace's own package.json keeps pointing at src/*.ts; the
// packed one is generated here and points at dist/.
import { execFileSync } from 'node:child_process';
import { copyFileSync, mkdirSync, writeFileSync } from 'node:fs';
import { join } from 'node:path';
import { npmPack, REPOSITORY_ROOT, type WorkspacePackage } from './pack-workspace.ts';

/** `./src/name.ts` → `./dist/name.js` and its types. */
function builtExport(source: string): { types: string; default: string } {
  const match = /^\.\/src\/(.+)\.ts$/.exec(source);
  if (!match) throw new Error(`@replix/sdk exports ${source}, which is not a file of src/`);
  return { types: `./dist/${match[1]}.d.ts`, default: `./dist/${match[1]}.js` };
}

export function packSdk(sdk: WorkspacePackage, stagingDir: string, outDir: string): string {
  const staged = join(stagingDir, 'sdk');
  mkdirSync(staged, { recursive: true });
  execFileSync(
    process.execPath,
    [
      join(REPOSITORY_ROOT, 'node_modules/typescript/bin/tsc'),
      '-p',
      join(sdk.dir, 'tsconfig.build.json'),
      '--outDir',
      join(staged, 'dist'),
    ],
    { stdio: ['ignore', 'inherit', 'inherit'] },
  );
  copyFileSync(join(sdk.dir, 'README.md'), join(staged, 'README.md'));
  const exports = Object.fromEntries(
    Object.entries(sdk.manifest.exports ?? {}).map(([path, source]) => [path, builtExport(source)]),
  );
  const main = exports['.'];
  if (!main) throw new Error('@replix/sdk has no "." export');
  const manifest = {
    name: sdk.name,
    version: sdk.manifest.version,
    description: sdk.manifest.description,
    type: 'module',
    exports,
    types: main.types,
    files: ['dist', 'README.md'],
    sideEffects: false,
    // AbortSignal.any (live queries) came in Node.js 20.3.
    engines: { node: '>=20.3' },
  };
  writeFileSync(join(staged, 'package.json'), `${JSON.stringify(manifest, null, 2)}\n`);
  return npmPack(staged, outDir);
}
