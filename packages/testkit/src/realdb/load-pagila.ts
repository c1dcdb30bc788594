import { findOnPath, MissingBinaryError, postgresBinDirs } from '../binaries.ts';
import type { TestDatabase } from '../test-database.ts';
import { runClient } from './run-client.ts';
import { readSampleFile } from './sample-files.ts';

/**
 * Loads Pagila (`pagila-schema.sql`, then `pagila-data.sql.gz`) into `db`, a fresh PostgreSQL
 * database, as published, through `psql` as the connection's user: the harness connects as
 * `postgres`, the superuser the files hand ownership to. Stops at the first error.
 */
export async function loadPagila(db: TestDatabase): Promise<void> {
  const psql = findOnPath('psql', postgresBinDirs());
  if (!psql) throw new MissingBinaryError('psql', 'postgresql-client');
  const args = ['--no-psqlrc', '--quiet', '-v', 'ON_ERROR_STOP=1', '-d', db.url];
  await runClient(psql, args, readSampleFile('pagila-schema.sql'));
  await runClient(psql, args, readSampleFile('pagila-data.sql.gz'));
}
