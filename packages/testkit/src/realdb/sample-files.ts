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

/**
 * Whether the sample databases are beside the repository (CI always has them; a clone of the
 * repository alone does not). When they are not, says so in one line, naming `suite` and how to
 * run it, and the caller skips the suite. When the folder is there, the suite runs: a file
 * missing from it then fails the suite (MissingSampleFileError), it is not skipped.
 */
export function sampleDatabasesPresent(
  suite: string,
  dir = sampleDir(),
  say: (line: string) => void = console.log,
): boolean {
  if (existsSync(dir)) return true;
  say(
    `not run: ${suite}: the real sample databases are not in ../shared/realdb-samples/ beside the ` +
      'repository; put that folder there (CI has it) and run npm test again',
  );
  return false;
}
