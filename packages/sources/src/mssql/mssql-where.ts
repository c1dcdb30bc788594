import { checkWhere } from '../where/where-check.ts';
import type { WhereDialect, WhereProblem } from '../where/where-dialect.ts';

/** SQL Server: no backslash escapes, `[…]` and `"…"` names. */
export const MSSQL_WHERE_DIALECT: WhereDialect = {
  parserDatabases: ['transactsql'],
  backslashMayEscape: false,
  hashComments: false,
  dollarQuotes: false,
  quotes: { "'": "'", '"': '"', '[': ']' },
};

export function checkMsSqlWhere(text: string): WhereProblem | null {
  return checkWhere(text, MSSQL_WHERE_DIALECT);
}
