import type pg from 'pg';
import { keyGroups, type RowsRequest, rowsWhereClause, whereFlagColumn } from '../rows-request.ts';
import { withTemporalParameters } from '../temporal-parameter.ts';
import { postgresSelectSql, quotePostgresIdentifier } from './postgres-sql.ts';
import { postgresRowConverter } from './postgres-types.ts';

/**
 * Reads a rows request on a pool whose sessions have the value text settings and the text type
 * parsers of the snapshot (see `SNAPSHOT_SESSION_SQL`, `TEXT_TYPES`), so values convert exactly
 * as the snapshot's do, inside one `BEGIN READ ONLY`, as snapshot reads are: whatever the
 * config's `where` calls cannot write to the source.
 */
export async function readPostgresRows(
  pool: pg.Pool,
  schema: string,
  request: RowsRequest,
): Promise<unknown[][]> {
  if (request.keys?.length === 0) return [];
  const client = await pool.connect();
  // The pool listens for errors only on idle sessions: a source that goes away between two of
  // these queries would emit an unheard 'error' and end the process. The failing query rejects
  // with the same error, so listening is enough.
  const ignore = () => {};
  client.on('error', ignore);
  try {
    await client.query('BEGIN READ ONLY');
    const rows = await readInTransaction(client, schema, request);
    await client.query('COMMIT');
    client.removeListener('error', ignore);
    client.release();
    return rows;
  } catch (error) {
    // The transaction's state is unknown after a failure: never hand the session back.
    client.removeListener('error', ignore);
    client.release(true);
    throw error;
  }
}

async function readInTransaction(
  client: pg.ClientBase,
  schema: string,
  request: RowsRequest,
): Promise<unknown[][]> {
  const convert = postgresRowConverter(request.columns);
  const select = postgresSelectSql(
    schema,
    request.table,
    request.columns,
    undefined,
    whereFlagColumn(request),
  );
  const rows: unknown[][] = [];
  const parameters = withTemporalParameters(request);
  for (const keys of keyGroups(parameters.keys)) {
    const { clause, params } = rowsWhereClause(
      parameters,
      keys,
      quotePostgresIdentifier,
      (i) => `$${i}`,
    );
    const result = await client.query<unknown[]>({
      text: `${select}${clause}`,
      values: params,
      rowMode: 'array',
    });
    for (const row of result.rows) {
      convert(row);
      rows.push(row);
    }
  }
  return rows;
}
