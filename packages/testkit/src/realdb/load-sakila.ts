import { findOnPath, MissingBinaryError } from '../binaries.ts';
import type { TestDatabase } from '../test-database.ts';
import { runClient } from './run-client.ts';
import { readSampleFile } from './sample-files.ts';

/**
 * The adjustments the samples README describes, and no others: MySQL 5.7 versioned comments
 * are unwrapped (MariaDB skips them, which would drop `address.location` and its values), and
 * the files' own `sakila` database is left out so they load into the test's fresh database:
 * its statements are commented out and `sakila.` qualifiers (in the `actor_info` view) dropped.
 */
export function adaptSakilaSql(sql: string): string {
  return sql
    .replace(/\/\*!50705 ([\s\S]*?)\*\//g, '$1')
    .replace(/^(DROP SCHEMA IF EXISTS|CREATE SCHEMA|USE) sakila;$/gm, '-- (loader) $&')
    .replace(/\bsakila\.(?=\w)/g, '');
}

/**
 * Loads Sakila (`sakila-mv-schema.sql`, then `sakila-mv-data.sql.gz`) into `db`, a fresh
 * MariaDB database, through the `mariadb` client, which understands the files' `DELIMITER`
 * blocks (triggers, procedures, functions).
 */
export async function loadSakila(db: TestDatabase): Promise<void> {
  const client = findOnPath('mariadb', ['/usr/bin']) ?? findOnPath('mysql', ['/usr/bin']);
  if (!client) throw new MissingBinaryError('mariadb (client)', 'mariadb-client');
  const url = new URL(db.url);
  const args = [
    '--no-defaults',
    `--host=${url.hostname}`,
    `--port=${url.port}`,
    `--user=${decodeURIComponent(url.username)}`,
    ...(url.password ? [`--password=${decodeURIComponent(url.password)}`] : []),
    '--default-character-set=utf8mb4',
    db.name,
  ];
  const schema = adaptSakilaSql(readSampleFile('sakila-mv-schema.sql'));
  const data = adaptSakilaSql(readSampleFile('sakila-mv-data.sql.gz'));
  await runClient(client, args, schema);
  await runClient(client, args, data);
}
