import type { SourceColumn } from '@replix/engine';
import { isMySqlSpatialType } from './mysql-types.ts';

/** A MySQL identifier in backticks; an embedded backtick is doubled. */
export function quoteMySqlIdentifier(name: string): string {
  return `\`${name.replaceAll('`', '``')}\``;
}

/**
 * The snapshot query for one table: its columns in request order, and the schema config's
 * `where` in parentheses so that an `OR` in it cannot escape the clause. The closing parenthesis
 * goes on its own line so that a trailing `-- comment` in the config cannot swallow it.
 */
export function mySqlSelectSql(
  table: string,
  columns: readonly SourceColumn[],
  where: string | undefined,
  extraColumn: string | null = null,
): string {
  const list = columns.map((column) => {
    const name = quoteMySqlIdentifier(column.name);
    return isMySqlSpatialType(column.sourceType) ? `ST_AsText(${name})` : name;
  });
  if (extraColumn) list.push(extraColumn);
  const filter = where?.trim() ? ` WHERE (${where}\n)` : '';
  return `SELECT ${list.join(', ')} FROM ${quoteMySqlIdentifier(table)}${filter}`;
}
