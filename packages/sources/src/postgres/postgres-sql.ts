import type { SourceColumn } from '@replix/engine';

/** A PostgreSQL identifier in double quotes (case kept as is); an embedded `"` is doubled. */
export function quotePostgresIdentifier(name: string): string {
  return `"${name.replaceAll('"', '""')}"`;
}

/**
 * The snapshot query for one table of `schema`: its columns in request order, and the schema
 * config's `where` in parentheses so that an `OR` in it cannot escape the clause. The closing
 * parenthesis goes on its own line so that a trailing `-- comment` cannot swallow it.
 */
export function postgresSelectSql(
  schema: string,
  table: string,
  columns: readonly SourceColumn[],
  where: string | undefined,
  extraColumn: string | null = null,
): string {
  const names = columns.map((column) => quotePostgresIdentifier(column.name));
  const list = [...names, ...(extraColumn ? [extraColumn] : [])].join(', ');
  const from = `${quotePostgresIdentifier(schema)}.${quotePostgresIdentifier(table)}`;
  const filter = where?.trim() ? ` WHERE (${where}\n)` : '';
  return `SELECT ${list} FROM ${from}${filter}`;
}
