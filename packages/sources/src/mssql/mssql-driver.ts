import type mssqlModule from 'mssql';

type Mssql = typeof mssqlModule;

let driver: Mssql | undefined;

/**
 * mssql, with tedious and Azure's identity library beneath it (some 350 modules, a third of an
 * instance's start), is loaded the first time a SQL Server source is reached: a process whose
 * sources are MySQL or PostgreSQL never pays for it.
 */
export async function loadMssql(): Promise<Mssql> {
  driver ??= (await import('mssql')).default;
  return driver;
}

/**
 * mssql once loaded, for what is made without waiting (a parameter's SQL type): every path
 * to a query has opened a pool first, through `loadMssql`.
 */
export function loadedMssql(): Mssql {
  if (driver === undefined) throw new Error('mssql is used before a pool was opened.');
  return driver;
}
