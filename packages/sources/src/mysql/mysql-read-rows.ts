import type { Pool, PoolConnection } from 'mysql2/promise';
import { keyGroups, type RowsRequest, rowsWhereClause, whereFlagColumn } from '../rows-request.ts';
import { withTemporalParameters } from '../temporal-parameter.ts';
import { mySqlSelectSql, quoteMySqlIdentifier } from './mysql-sql.ts';
import { mySqlRowConverter } from './mysql-types.ts';

/**
 * Reads a rows request on a pool whose sessions run in UTC (see `MySqlConnector`), inside one
 * `START TRANSACTION READ ONLY`, as snapshot reads are: whatever the config's `where` calls
 * cannot write to the source.
 */
export async function readMySqlRows(pool: Pool, request: RowsRequest): Promise<unknown[][]> {
  if (request.keys?.length === 0) return [];
  const connection = await pool.getConnection();
  try {
    await connection.query('START TRANSACTION READ ONLY');
    const rows = await readInTransaction(connection, request);
    await connection.query('COMMIT');
    connection.release();
    return rows;
  } catch (error) {
    // The transaction's state is unknown after a failure: never hand the session back.
    connection.destroy();
    throw error;
  }
}

async function readInTransaction(
  connection: PoolConnection,
  request: RowsRequest,
): Promise<unknown[][]> {
  const convert = mySqlRowConverter(request.columns);
  const select = mySqlSelectSql(
    request.table,
    request.columns,
    undefined,
    whereFlagColumn(request),
  );
  const rows: unknown[][] = [];
  const parameters = withTemporalParameters(request);
  for (const keys of keyGroups(parameters.keys)) {
    const { clause, params } = rowsWhereClause(parameters, keys, quoteMySqlIdentifier, () => '?');
    const [result] = await connection.query({
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
