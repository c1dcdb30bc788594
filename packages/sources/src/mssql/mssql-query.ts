import type { ConnectionPool, ISqlType, Transaction } from 'mssql';
import { loadedMssql } from './mssql-driver.ts';
import type { MsSqlLsn } from './mssql-position.ts';

/** A metadata row, by column name. */
export type MsSqlRow = Record<string, unknown>;

export interface MsSqlParameter {
  readonly name: string;
  readonly type: ISqlType | (() => ISqlType);
  readonly value: unknown;
}

/** An identifier as a parameter; sysname is nvarchar(128). */
export function nameParameter(name: string, value: string): MsSqlParameter {
  return { name, type: loadedMssql().NVarChar(128), value };
}

/** An LSN as a parameter; SQL Server converts varbinary(10) to the functions' binary(10). */
export function lsnParameter(name: string, lsn: MsSqlLsn): MsSqlParameter {
  return { name, type: loadedMssql().VarBinary(10), value: lsn.bytes };
}

export function intParameter(name: string, value: number): MsSqlParameter {
  return { name, type: loadedMssql().Int, value };
}

/**
 * Runs a parameterised query on a pool or inside a transaction and returns the rows of its
 * first result set by column name. Names only ever reach SQL text through parameters or
 * `quoteMsSqlIdentifier`.
 */
export async function msSqlQuery(
  source: ConnectionPool | Transaction,
  text: string,
  parameters: readonly MsSqlParameter[] = [],
): Promise<MsSqlRow[]> {
  const request = source.request();
  for (const parameter of parameters) {
    request.input(parameter.name, parameter.type, parameter.value);
  }
  const result = await request.query<MsSqlRow>(text);
  return result.recordset ?? [];
}

/**
 * Like `msSqlQuery`, with each row an array of values in select-list order: how snapshot and
 * change queries read rows, so that the per-row work never looks values up by name.
 */
export async function msSqlArrayRows(
  source: ConnectionPool | Transaction,
  text: string,
  parameters: readonly MsSqlParameter[] = [],
): Promise<unknown[][]> {
  const request = source.request();
  request.arrayRowMode = true;
  for (const parameter of parameters) {
    request.input(parameter.name, parameter.type, parameter.value);
  }
  // With `arrayRowMode` each row is an array; mssql's types describe rows as objects only.
  const result = await request.query(text);
  const rows: unknown[][] = result.recordset ?? [];
  return rows;
}
