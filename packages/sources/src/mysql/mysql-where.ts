import { checkWhere } from '../where/where-check.ts';
import type { WhereDialect, WhereProblem } from '../where/where-dialect.ts';

/** MySQL and MariaDB: `#` comments, backslash escapes (unless NO_BACKSLASH_ESCAPES), backticks. */
export const MYSQL_WHERE_DIALECT: WhereDialect = {
  parserDatabases: ['mysql', 'mariadb'],
  backslashMayEscape: true,
  hashComments: true,
  dollarQuotes: false,
  quotes: { "'": "'", '"': '"', '`': '`' },
};

export function checkMySqlWhere(text: string): WhereProblem | null {
  return checkWhere(text, MYSQL_WHERE_DIALECT);
}
