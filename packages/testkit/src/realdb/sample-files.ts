import { existsSync, readFileSync } from 'node:fs';
import { dirname, join, resolve } from 'node:path';
import { fileURLToPath } from 'node:url';
import { gunzipSync } from 'node:zlib';

/** Thrown when the shared sample-database folder or one of its files is missing. */
export class MissingSampleFileError extends Error {
  constructor(path: string) {
    super(
      `sample database file ${path} was not found: the real sample databases are expected in ` +
        '../shared/realdb-samples/ next to the repository (see its README)',
    );
    this.name = 'MissingSampleFileError';
  }
}

/** The repository root: this file is packages/testkit/src/realdb/sample-files.ts. */
const repositoryRoot = resolve(dirname(fileURLToPath(import.meta.url)), '../../../..');

/** `../shared/realdb-samples/` relative to the repository root. */
export function sampleDir(): string {
  return join(repositoryRoot, '..', 'shared', 'realdb-samples');
}

/** A sample file's text, gunzipped in memory when it ends in `.gz`; the file stays untouched. */
export function readSampleFile(name: string): string {
  const path = join(sampleDir(), name);
  if (!existsSync(path)) throw new MissingSampleFileError(path);
  const bytes = readFileSync(path);
  return (name.endsWith('.gz') ? gunzipSync(bytes) : bytes).toString('utf8');
}
