import { createHash } from 'node:crypto';
import { readdirSync, readFileSync } from 'node:fs';
import { join, relative } from 'node:path';
import { fileURLToPath } from 'node:url';

const PROGRAM_PACKAGES = ['runtime', 'query', 'engine', 'sources', 'instance-protocol', 'instance'];

function sourceFiles(dir: string): string[] {
  return readdirSync(dir, { withFileTypes: true }).flatMap((entry) => {
    const path = join(dir, entry.name);
    if (entry.isDirectory()) return sourceFiles(path);
    // .js: the packed CLI carries the same sources compiled (tools/pack-cli.ts).
    return /\.[jt]s$/.test(entry.name) ? [path] : [];
  });
}

/**
 * The content hash of the instance program when it runs from source (`replix serve` without an
 * artifact): 12 hex digits over the source of the packages it is made of, so two instances
 * report the same build exactly when they run the same code. An artifact carries its own hash.
 */
export function sourceBuildHash(): string {
  const packagesDir = fileURLToPath(new URL('../../', import.meta.url));
  const hash = createHash('sha256');
  const files = PROGRAM_PACKAGES.flatMap((name) =>
    sourceFiles(join(packagesDir, name, 'src')),
  ).sort();
  for (const file of files) {
    hash.update(relative(packagesDir, file));
    hash.update('\u0000');
    hash.update(readFileSync(file));
  }
  return hash.digest('hex').slice(0, 12);
}
