import { checkWhere } from '../where/where-check.ts';
import type { WhereDialect, WhereProblem } from '../where/where-dialect.ts';

/** PostgreSQL: `E'…'` strings take backslash escapes, `$$…$$` quotes strings, `"…"` names. */
export const POSTGRES_WHERE_DIALECT: WhereDialect = {
  parserDatabases: ['postgresql'],
  backslashMayEscape: true,
  hashComments: false,
  dollarQuotes: true,
  quotes: { "'": "'", '"': '"' },
};

export function checkPostgresWhere(text: string): WhereProblem | null {
  return checkWhere(text, POSTGRES_WHERE_DIALECT);
}
