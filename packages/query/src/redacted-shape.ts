import { QueryParseError, QueryTooComplexError } from './errors.ts';
import { Lexer } from './lexer.ts';
import { DEFAULT_PARSE_LIMITS } from './parse-limits.ts';

/**
 * What a query does without what it was given: its tokens one space apart, every string and
 * number written `?` (LIMIT counts and LIKE patterns too, unlike `queryShape`, which keeps the
 * ones the parser reads by value), comments and layout left out. Safe to put in a trace or a
 * log: no value a caller wrote survives. Null when the text does not lex.
 */
export function redactedShape(
  source: string,
  maxTokens: number = DEFAULT_PARSE_LIMITS.maxTokens,
): string | null {
  const lexer = new Lexer(source, maxTokens);
  const parts: string[] = [];
  try {
    for (let token = lexer.next(); token.kind !== 'eof'; token = lexer.next()) {
      if (token.kind === 'string' || token.kind === 'number') parts.push('?');
      // A quoted name as written, quotes and escapes included: it reads back as the same name.
      else if (token.quoted) parts.push(source.slice(token.span.start, token.span.end));
      else parts.push(token.value);
    }
  } catch (error) {
    if (error instanceof QueryParseError || error instanceof QueryTooComplexError) return null;
    throw error;
  }
  return parts.join(' ');
}
