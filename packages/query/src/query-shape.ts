import type { Literal } from './ast.ts';
import { QueryParseError, QueryTooComplexError } from './errors.ts';
import { Lexer } from './lexer.ts';
import { DEFAULT_PARSE_LIMITS } from './parse-limits.ts';

/** A literal lifted out of a query's shape: a string or a number written as a value. */
export type ShapeLiteral = Extract<Literal, { kind: 'string' | 'number' }>;

/**
 * A query's text with the values of its literals left out: two queries with the same `key`
 * parse to the same tree but for the values (and spans) of their `literals`, so a plan made
 * for one fits the other once its literals are bound.
 */
export interface QueryShape {
  readonly key: string;
  /** The lifted literals in text order, as the parser makes them (spans included). */
  readonly literals: readonly ShapeLiteral[];
}

/**
 * Keywords whose string or number the parser reads by value (LIMIT 10 is checked and kept as a
 * number, a LIKE pattern is compiled, AFTER is a cursor): those stay in the shape. Every other
 * string or number token is a Literal, which the parser reads by kind only.
 */
const KEPT_AFTER = new Set(['LIKE', 'ILIKE', 'LIMIT', 'OFFSET', 'AFTER']);

/**
 * The shape of `source`, from its tokens alone: cheaper than a parse, and it does not say the
 * query is valid. Null when the text does not even lex (or has more than `maxTokens` tokens):
 * the parser then reports that error where it finds it in reading order.
 *
 * The key is the token stream, one token after another with a space after each: names as
 * written (quoted ones re-quoted, `"` doubled), symbols as written, kept strings re-quoted,
 * kept numbers as written, and a lifted literal as `?s` or `?n` (its kind decides what it may
 * be compared with, so it stays). Layout and comments are not part of a shape.
 */
export function queryShape(
  source: string,
  maxTokens: number = DEFAULT_PARSE_LIMITS.maxTokens,
): QueryShape | null {
  const lexer = new Lexer(source, maxTokens);
  const literals: ShapeLiteral[] = [];
  let key = '';
  let keepNext = false;
  try {
    for (let token = lexer.next(); token.kind !== 'eof'; token = lexer.next()) {
      const keep = keepNext;
      keepNext = false;
      switch (token.kind) {
        case 'name':
          if (token.quoted) {
            key += `"${token.value.replaceAll('"', '""')}" `;
          } else {
            key += `${token.value} `;
            keepNext = token.value.length <= 6 && KEPT_AFTER.has(token.value.toUpperCase());
          }
          break;
        case 'string':
          if (keep) {
            key += `'${token.value.replaceAll("'", "''")}' `;
          } else {
            key += '?s ';
            literals.push({ kind: 'string', value: token.value, span: token.span });
          }
          break;
        case 'number':
          if (keep) {
            key += `${token.value} `;
          } else {
            key += '?n ';
            literals.push({ kind: 'number', text: token.value, span: token.span });
          }
          break;
        default:
          key += `${token.value} `;
      }
    }
  } catch (error) {
    if (error instanceof QueryParseError || error instanceof QueryTooComplexError) return null;
    throw error;
  }
  return { key, literals };
}
