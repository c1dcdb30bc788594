import type { Pool } from 'mysql2/promise';
import { keyGroups, type RowsRequest, rowsWhereClause } from '../rows-request.ts';
import { mySqlSelectSql, quoteMySqlIdentifier } from './mysql-sql.ts';
import { mySqlRowConverter } from './mysql-types.ts';

/** Reads a rows request on a pool whose sessions run in UTC (see `MySqlConnector`). */
export async function readMySqlRows(pool: Pool, request: RowsRequest): Promise<unknown[][]> {
  if (request.keys?.length === 0) return [];
  const convert = mySqlRowConverter(request.columns);
  const select = mySqlSelectSql(request.table, request.columns, undefined);
  const rows: unknown[][] = [];
  for (const keys of keyGroups(request.keys)) {
    const { clause, params } = rowsWhereClause(request, keys, quoteMySqlIdentifier, () => '?');
    const [result] = await pool.query({
      sql: `${select}${clause}`,
      values: params,
      rowsAsArray: true,
    });
    for (const row of result as unknown[][]) {
      convert(row);
      rows.push(row);
    }
  }
  return rows;
}
