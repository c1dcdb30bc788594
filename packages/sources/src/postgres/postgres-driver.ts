import type pgModule from 'pg';
import type PgCursor from 'pg-cursor';

type Pg = typeof pgModule;

let driver: Pg | undefined;
let cursor: typeof PgCursor | undefined;

/**
 * node-postgres, loaded the first time a PostgreSQL source is reached: a process whose sources
 * are MySQL or MariaDB never pays for it.
 */
export async function loadPg(): Promise<Pg> {
  driver ??= (await import('pg')).default;
  return driver;
}

/** pg-cursor, loaded by the first snapshot read (`loadPg` has run by then). */
export async function loadPgCursor(): Promise<typeof PgCursor> {
  cursor ??= (await import('pg-cursor')).default;
  return cursor;
}
