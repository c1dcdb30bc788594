import type { SourceColumn } from '@replix/engine';
import { msSqlBaseType } from './mssql-types.ts';

/** A SQL Server identifier in square brackets; an embedded `]` is doubled. */
export function quoteMsSqlIdentifier(name: string): string {
  return `[${name.replaceAll(']', ']]')}]`;
}

/** A Unicode string literal; an embedded `'` is doubled. For messages that show T-SQL to run. */
export function msSqlStringLiteral(text: string): string {
  return `N'${text.replaceAll("'", "''")}'`;
}

/**
 * How one column is selected so that tedious hands over its canonical form, or text the
 * converters turn into it:
 * - DECIMAL / NUMERIC as varchar: tedious would decode them into doubles and lose digits;
 *   varchar(50) holds any of the 38 digits, a sign and a point.
 * - MONEY / SMALLMONEY likewise, with style 2 for all four decimals (the default style keeps two).
 * - sql_variant as nvarchar: tedious would decode each value by its own base type.
 * - hierarchyid and the spatial types through `ToString()` (`/1/2/`, WKT), not their CLR bytes.
 * - SQL Server 2025's json and vector as nvarchar, a form every tedious version reads.
 */
export function msSqlSelectExpression(column: SourceColumn): string {
  const name = quoteMsSqlIdentifier(column.name);
  switch (msSqlBaseType(column.sourceType)) {
    case 'decimal':
    case 'numeric':
      return `CONVERT(varchar(50), ${name}) AS ${name}`;
    case 'money':
    case 'smallmoney':
      return `CONVERT(varchar(30), ${name}, 2) AS ${name}`;
    case 'sql_variant':
      return `CONVERT(nvarchar(4000), ${name}) AS ${name}`;
    case 'hierarchyid':
    case 'geometry':
    case 'geography':
      return `${name}.ToString() AS ${name}`;
    case 'json':
    case 'vector':
      return `CONVERT(nvarchar(max), ${name}) AS ${name}`;
    default:
      return name;
  }
}

/** `[schema].[table]`. */
export function msSqlTableName(schema: string, table: string): string {
  return `${quoteMsSqlIdentifier(schema)}.${quoteMsSqlIdentifier(table)}`;
}

/**
 * The snapshot query for one table of `schema`: its columns in request order, and the schema
 * config's `where` in parentheses so that an `OR` in it cannot escape the clause. The closing
 * parenthesis goes on its own line so that a trailing `-- comment` cannot swallow it.
 */
export function msSqlSelectSql(
  schema: string,
  table: string,
  columns: readonly SourceColumn[],
  where: string | undefined,
  extraColumn: string | null = null,
): string {
  const expressions = columns.map(msSqlSelectExpression);
  const list = [...expressions, ...(extraColumn ? [extraColumn] : [])].join(', ');
  const filter = where?.trim() ? ` WHERE (${where}\n)` : '';
  return `SELECT ${list} FROM ${msSqlTableName(schema, table)}${filter}`;
}

/** The change function CDC generates for a capture instance, e.g. `cdc.[fn_cdc_get_all_changes_dbo_orders]`. */
export function msSqlChangeFunction(captureInstance: string): string {
  return `cdc.${quoteMsSqlIdentifier(`fn_cdc_get_all_changes_${captureInstance}`)}`;
}

/**
 * The changes of one capture instance committed after `@last_lsn` up to `@to_lsn`, oldest
 * first: the requested columns (cast as in a snapshot), then the commit LSN, the sequence value
 * and the operation (1 delete, 2 insert, 3 update before-image, 4 update after-image).
 *
 * `all update old` returns both images of an update; they share one `__$seqval`, and ordering by
 * `__$operation` after it puts the before-image first. The function's low end is inclusive, so
 * it starts at the LSN after the last one already delivered (`sys.fn_cdc_increment_lsn`).
 */
export function msSqlChangesSql(captureInstance: string, columns: readonly SourceColumn[]): string {
  const list = columns.map(msSqlSelectExpression).join(', ');
  return [
    'DECLARE @from_lsn binary(10) = sys.fn_cdc_increment_lsn(@last_lsn);',
    `SELECT ${list}, [__$start_lsn], [__$seqval], [__$operation]`,
    `FROM ${msSqlChangeFunction(captureInstance)}(@from_lsn, @to_lsn, N'all update old')`,
    'ORDER BY [__$start_lsn], [__$seqval], [__$operation]',
  ].join('\n');
}

/**
 * Where the next poll may read up to: the newest LSN the capture job has processed
 * (`sys.fn_cdc_get_max_lsn`), or, when more than `@limit` transactions wait after `@last_lsn`,
 * the commit LSN of the `@limit`-th, so that a backlog is read in bounded steps. Entries with
 * `tran_id = 0x00` are the markers the capture job writes to show progress while nothing
 * changes; they are no transactions. `next_lsn` is the first LSN a poll reads. `max_lsn` is
 * NULL when CDC is off for the database (or the user may not see it); the mapping table does
 * not exist then, and the IF keeps the statement naming it from running.
 */
export const MSSQL_WINDOW_SQL = `
DECLARE @max_lsn binary(10) = sys.fn_cdc_get_max_lsn();
IF @max_lsn IS NULL
  SELECT CAST(NULL AS binary(10)) AS max_lsn, CAST(NULL AS binary(10)) AS next_lsn,
    0 AS transactions, CAST(NULL AS binary(10)) AS last_transaction_lsn
ELSE
  SELECT @max_lsn AS max_lsn, sys.fn_cdc_increment_lsn(@last_lsn) AS next_lsn,
    COUNT(*) AS transactions, MAX(w.start_lsn) AS last_transaction_lsn
  FROM (
    SELECT TOP (@limit) m.start_lsn FROM cdc.lsn_time_mapping AS m
    WHERE m.start_lsn > @last_lsn AND m.start_lsn <= @max_lsn AND m.tran_id <> 0x00
    ORDER BY m.start_lsn
  ) AS w`;
