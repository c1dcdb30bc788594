import type pg from 'pg';
import { keyGroups, type RowsRequest, rowsWhereClause } from '../rows-request.ts';
import { postgresSelectSql, quotePostgresIdentifier } from './postgres-sql.ts';
import { postgresRowConverter } from './postgres-types.ts';

/**
 * Reads a rows request on a client whose session has the value text settings and the text
 * type parsers of the snapshot (see `SNAPSHOT_SESSION_SQL`, `TEXT_TYPES`), so values convert
 * exactly as the snapshot's do.
 */
export async function readPostgresRows(
  client: pg.Pool | pg.ClientBase,
  schema: string,
  request: RowsRequest,
): Promise<unknown[][]> {
  if (request.keys?.length === 0) return [];
  const convert = postgresRowConverter(request.columns);
  const select = postgresSelectSql(schema, request.table, request.columns, undefined);
  const rows: unknown[][] = [];
  for (const keys of keyGroups(request.keys)) {
    const { clause, params } = rowsWhereClause(
      request,
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
