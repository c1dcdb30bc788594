import type { SourceBackend } from '../connector.ts';
import { checkMsSqlWhere } from '../mssql/mssql-where.ts';
import { checkMySqlWhere } from '../mysql/mysql-where.ts';
import { checkPostgresWhere } from '../postgres/postgres-where.ts';
import type { WhereProblem } from './where-dialect.ts';

const CHECKS: Record<SourceBackend, (text: string) => WhereProblem | null> = {
  mysql: checkMySqlWhere,
  postgres: checkPostgresWhere,
  mssql: checkMsSqlWhere,
};

/**
 * Checks a schema config's `where` predicate for the source's SQL dialect: it must be exactly one
 * boolean expression over the table's own row (see `checkWhereLexically`, `checkWhereSyntax`).
 * Returns the first problem with its position, or null when the predicate is safe to send.
 */
export function validateWherePredicate(backend: SourceBackend, text: string): WhereProblem | null {
  return CHECKS[backend](text);
}
