import type { SourceColumn } from '@replix/engine';

/**
 * Current rows of one table, read outside any snapshot: by primary key (`keys`), or all rows
 * (`keys` null), optionally only those whose `after.column` is above `after.value`, within the
 * table's `where` (or, with `flagWhere`, each row flagged by it). Change data capture re-checks
 * filtered rows with it; incremental polling reads what changed with it.
 */
export interface RowsRequest {
  readonly table: string;
  /** The columns to read, in the order each returned row lists its values. */
  readonly columns: readonly SourceColumn[];
  /** Source names of the primary-key columns, in key order (for `keys`). */
  readonly keyColumns: readonly string[];
  /** Primary-key values, each in `keyColumns` order; null for every row. */
  readonly keys: readonly (readonly unknown[])[] | null;
  readonly where?: string | undefined;
  /**
   * With a `where`: every row whatever `where` says, each with one more value at the end, 1
   * when it satisfies `where` and 0 when not. One statement reads both, so they always agree.
   */
  readonly flagWhere?: boolean | undefined;
  readonly after?: { readonly column: string; readonly value: unknown } | undefined;
}

/** Keys per query: bounded so that no statement grows past what a server accepts. */
export const KEYS_PER_QUERY = 500;

/**
 * The WHERE clause of a rows request with `?`-style placeholders from `placeholder(i)`, and its
 * parameters. Identifiers come quoted by `quote`; values only ever travel as parameters.
 */
export function rowsWhereClause(
  request: RowsRequest,
  keys: readonly (readonly unknown[])[] | null,
  quote: (name: string) => string,
  placeholder: (index: number) => string,
): { clause: string; params: unknown[] } {
  const parts: string[] = [];
  const params: unknown[] = [];
  const flagged = whereFlagColumn(request);
  if (request.where?.trim() && !flagged) parts.push(`(${request.where}\n)`);
  if (keys) {
    const tuple = request.keyColumns.map(quote).join(', ');
    const rows = keys.map((key) => {
      const values = key.map((value) => {
        params.push(value);
        return placeholder(params.length);
      });
      return `(${values.join(', ')})`;
    });
    parts.push(`(${tuple}) IN (${rows.join(', ')})`);
  }
  if (request.after) {
    params.push(request.after.value);
    parts.push(`${quote(request.after.column)} > ${placeholder(params.length)}`);
  }
  return { clause: parts.length ? ` WHERE ${parts.join(' AND ')}` : '', params };
}

/** The extra select-list column of a `flagWhere` request (null: none). The SQL is every backend's. */
export function whereFlagColumn(request: RowsRequest): string | null {
  return request.flagWhere && request.where?.trim()
    ? `CASE WHEN (${request.where}\n) THEN 1 ELSE 0 END`
    : null;
}

/** Splits keys into groups of at most `KEYS_PER_QUERY` (one group, null, for all rows). */
export function keyGroups(
  keys: readonly (readonly unknown[])[] | null,
): (readonly (readonly unknown[])[] | null)[] {
  if (keys === null) return [null];
  const groups: (readonly (readonly unknown[])[])[] = [];
  for (let i = 0; i < keys.length; i += KEYS_PER_QUERY)
    groups.push(keys.slice(i, i + KEYS_PER_QUERY));
  return groups;
}
