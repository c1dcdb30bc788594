import { type SourceColumn, timestampText } from '@replix/engine';
import type { RowsRequest } from './rows-request.ts';

/**
 * Canonical temporal values as the text MySQL/MariaDB and PostgreSQL convert back to the
 * column's own value exactly (sessions run in UTC): a timestamp's epoch microseconds as
 * `YYYY-MM-DD HH:MM:SS.ffffff`, a time's seconds as `[-]HH:MM:SS.ffffff`. A number would not
 * compare with a temporal column, and a JS `Date` would lose the microseconds.
 */
export function temporalParameter(column: SourceColumn | undefined, value: unknown): unknown {
  if (typeof value !== 'number' || !Number.isFinite(value)) return value;
  if (column?.type === 'timestamp') return timestampText(value, 6).slice(0, -1).replace('T', ' ');
  if (column?.type === 'time') return timeParameterText(value);
  return value;
}

/** Seconds with a µs fraction as `[-]HH:MM:SS.ffffff`, which every source reads back exactly. */
export function timeParameterText(seconds: number): string {
  const micros = Math.round(Math.abs(seconds) * 1_000_000);
  const whole = Math.floor(micros / 1_000_000);
  const pad = (n: number, width = 2) => String(n).padStart(width, '0');
  const clock = `${pad(Math.floor(whole / 3600))}:${pad(Math.floor(whole / 60) % 60)}:${pad(whole % 60)}`;
  return `${seconds < 0 ? '-' : ''}${clock}.${pad(micros % 1_000_000, 6)}`;
}

/** The request with its key and change-column values as parameters (see `temporalParameter`). */
export function withTemporalParameters(request: RowsRequest): RowsRequest {
  const byName = new Map(request.columns.map((column) => [column.name, column]));
  const keyColumns = request.keyColumns.map((name) => byName.get(name));
  const keys =
    request.keys?.map((key) => key.map((value, i) => temporalParameter(keyColumns[i], value))) ??
    null;
  const after = request.after && {
    column: request.after.column,
    value: temporalParameter(byName.get(request.after.column), request.after.value),
  };
  return { ...request, keys, after };
}
