import type { WhereDialect, WhereProblem } from './where-dialect.ts';
import { checkWhereLexically } from './where-lexical-check.ts';
import { checkWhereSyntax } from './where-syntax-check.ts';

/** Both checks for one dialect: the token scan first, whose positions are exact, then the parse. */
export function checkWhere(text: string, dialect: WhereDialect): WhereProblem | null {
  if (text.trim() === '') return { message: 'a where predicate cannot be empty', position: 1 };
  return checkWhereLexically(text, dialect) ?? checkWhereSyntax(text, dialect);
}
