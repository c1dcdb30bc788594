import type mysql2Module from 'mysql2';

type Mysql2 = typeof mysql2Module;

let driver: Mysql2 | undefined;

/**
 * mysql2 (and, for change streams, zongji: `newBinlogClient`), loaded the first time a MySQL or
 * MariaDB source is reached: a process whose sources are PostgreSQL never pays for them (some
 * 24 MB resident between the two).
 */
export async function loadMysql2(): Promise<Mysql2> {
  driver ??= (await import('mysql2')).default;
  return driver;
}
