import type { SourceColumn } from '@replix/engine';
import type { ConnectionPool } from 'mssql';
import { KEYS_PER_QUERY, type RowsRequest, whereFlagColumn } from '../rows-request.ts';
import { timeParameterText } from '../temporal-parameter.ts';
import { loadedMssql } from './mssql-driver.ts';
import { type MsSqlParameter, msSqlArrayRows } from './mssql-query.ts';
import { msSqlSelectSql, quoteMsSqlIdentifier } from './mssql-sql.ts';
import { msSqlBaseType, msSqlRowConverter } from './mssql-types.ts';

/**
 * SQL Server takes at most 2,100 parameters per request; a composite key spends one per column
 * on every key, so fewer keys fit in one query.
 */
const MAX_PARAMETERS = 2000;

const VARCHAR_TYPES = new Set(['char', 'varchar', 'text']);

/**
 * Epoch microseconds as a `Date` of the whole milliseconds carrying the rest in tedious's
 * `nanosecondDelta` (seconds), which tedious adds when it encodes a DATETIME2 or DATETIMEOFFSET.
 */
function microsDate(micros: number): Date {
  const rest = ((micros % 1000) + 1000) % 1000;
  const date = new Date((micros - rest) / 1000);
  return Object.assign(date, { nanosecondDelta: rest / 1_000_000 });
}

/**
 * A value in its canonical form as a parameter SQL Server compares with the column as the
 * snapshot read it: timestamps back to dates of the column's own type (a datetime2 parameter
 * against a datetime column would compare 23:59:59.997 as 23:59:59.9966667), times, decimals
 * and bigints as text SQL Server converts exactly, text as varchar for varchar columns (an
 * nvarchar parameter would convert the column and give up its index).
 */
export function msSqlValueParameter(
  name: string,
  column: SourceColumn | undefined,
  value: unknown,
): MsSqlParameter {
  const base = column === undefined ? '' : msSqlBaseType(column.sourceType);
  const types = loadedMssql();
  if (value === null || value === undefined) return { name, type: types.NVarChar(1), value: null };
  switch (column?.type) {
    case 'timestamp': {
      const date = microsDate(Number(value));
      if (base === 'datetime') return { name, type: types.DateTime, value: date };
      if (base === 'smalldatetime') return { name, type: types.SmallDateTime, value: date };
      if (base === 'datetimeoffset') return { name, type: types.DateTimeOffset(7), value: date };
      return { name, type: types.DateTime2(7), value: date };
    }
    case 'time':
      return { name, type: types.VarChar(16), value: timeParameterText(Number(value)) };
    case 'date':
    case 'bigint':
    case 'decimal':
      return { name, type: types.VarChar(50), value: String(value) };
    case 'int':
      return { name, type: types.Int, value };
    case 'float':
      return { name, type: types.Float, value };
    case 'boolean':
      return { name, type: types.Bit, value };
    case 'binary':
      return { name, type: types.VarBinary(types.MAX), value };
    default: {
      const text = String(value);
      if (base === 'uniqueidentifier') return { name, type: types.UniqueIdentifier, value: text };
      if (VARCHAR_TYPES.has(base)) {
        return { name, type: types.VarChar(text.length <= 8000 ? 8000 : types.MAX), value: text };
      }
      return { name, type: types.NVarChar(text.length <= 4000 ? 4000 : types.MAX), value: text };
    }
  }
}

/**
 * The WHERE clause of a rows request in T-SQL, values as parameters `@p1…`. SQL Server has no
 * row-value IN, so a composite key is an OR of ANDs; a single-column key is a plain IN.
 */
export function msSqlRowsWhereClause(
  request: RowsRequest,
  keys: readonly (readonly unknown[])[] | null,
): { clause: string; parameters: MsSqlParameter[] } {
  const byName = new Map(request.columns.map((column) => [column.name, column]));
  const parts: string[] = [];
  const parameters: MsSqlParameter[] = [];
  const parameter = (columnName: string, value: unknown): string => {
    const name = `p${parameters.length + 1}`;
    parameters.push(msSqlValueParameter(name, byName.get(columnName), value));
    return `@${name}`;
  };
  if (request.where?.trim() && !whereFlagColumn(request)) parts.push(`(${request.where}\n)`);
  if (keys) {
    const keyColumns = request.keyColumns;
    if (keyColumns.length === 1) {
      const column = keyColumns[0]!;
      const list = keys.map((key) => parameter(column, key[0]));
      parts.push(`${quoteMsSqlIdentifier(column)} IN (${list.join(', ')})`);
    } else {
      const alternatives = keys.map((key) => {
        const equals = keyColumns.map(
          (column, i) => `${quoteMsSqlIdentifier(column)} = ${parameter(column, key[i])}`,
        );
        return `(${equals.join(' AND ')})`;
      });
      parts.push(`(${alternatives.join(' OR ')})`);
    }
  }
  if (request.after) {
    const { column, value } = request.after;
    parts.push(`${quoteMsSqlIdentifier(column)} > ${parameter(column, value)}`);
  }
  return { clause: parts.length > 0 ? ` WHERE ${parts.join(' AND ')}` : '', parameters };
}

/** Keys in groups small enough for one query each (one group, null, for every row). */
export function msSqlKeyGroups(
  keys: readonly (readonly unknown[])[] | null,
  keyColumnCount: number,
): (readonly (readonly unknown[])[] | null)[] {
  if (keys === null) return [null];
  const size = Math.max(
    1,
    Math.min(KEYS_PER_QUERY, Math.floor(MAX_PARAMETERS / Math.max(1, keyColumnCount))),
  );
  const groups: (readonly (readonly unknown[])[])[] = [];
  for (let i = 0; i < keys.length; i += size) groups.push(keys.slice(i, i + size));
  return groups;
}

/** Current rows by primary key or change column (see `RowsRequest`), converted as a snapshot's. */
export async function readMsSqlRows(
  pool: ConnectionPool,
  schema: string,
  request: RowsRequest,
): Promise<unknown[][]> {
  if (request.keys?.length === 0) return [];
  const convert = msSqlRowConverter(request.columns);
  const select = msSqlSelectSql(
    schema,
    request.table,
    request.columns,
    undefined,
    whereFlagColumn(request),
  );
  const rows: unknown[][] = [];
  for (const keys of msSqlKeyGroups(request.keys, request.keyColumns.length)) {
    const { clause, parameters } = msSqlRowsWhereClause(request, keys);
    for (const row of await msSqlArrayRows(pool, `${select}${clause}`, parameters)) {
      convert(row);
      rows.push(row);
    }
  }
  return rows;
}
