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
  /** Tokens in the text: what a plan made from it holds grows with them (a cache's measure). */
  readonly tokens: number;
}

/**
 * Keywords whose string or number the parser reads by value (LIMIT 10 is checked and kept as a
 * number, a LIKE pattern is compiled, AFTER is a cursor): those stay in the shape. Every other
 * string or number token is a Literal, which the parser reads by kind only.
 */
const KEPT_AFTER = new Set(['like', 'ilike', 'limit', 'offset', 'after']);

/**
 * The shape of `source`, from its tokens alone: cheaper than a parse, and it does not say the
 * query is valid. Null when the text does not even lex (or has more than `maxTokens` tokens):
 * the parser then reports that error where it finds it in reading order.
 *
 * The key is the text with each lifted literal replaced by `?s` or `?n` (its kind decides what
 * it may be compared with, so it stays). No token starts with `?`, so a key is read back into
 * one token stream only: equal keys, equal queries but for their lifted values. Layout and
 * comments stay in the key: texts laid out differently are only different shapes.
 */
export function queryShape(
  source: string,
  maxTokens: number = DEFAULT_PARSE_LIMITS.maxTokens,
): QueryShape | null {
  const lexer = new Lexer(source, maxTokens);
  const literals: ShapeLiteral[] = [];
  let key = '';
  let copied = 0;
  let keepNext = false;
  let tokens = 0;
  try {
    for (let token = lexer.next(); token.kind !== 'eof'; token = lexer.next()) {
      tokens++;
      const keep = keepNext;
      keepNext = false;
      if (token.kind === 'name') {
        keepNext = !token.quoted && isKeepingKeyword(token.value);
      } else if (!keep && (token.kind === 'string' || token.kind === 'number')) {
        const { span } = token;
        key += `${source.slice(copied, span.start)}${token.kind === 'string' ? '?s' : '?n'}`;
        copied = span.end;
        literals.push(
          token.kind === 'string'
            ? { kind: 'string', value: token.value, span }
            : { kind: 'number', text: token.value, span },
        );
      }
    }
  } catch (error) {
    if (error instanceof QueryParseError || error instanceof QueryTooComplexError) return null;
    throw error;
  }
  return { key: copied === 0 ? source : key + source.slice(copied), literals, tokens };
}

/** A keyword of KEPT_AFTER in any case; most names are ruled out without a lowercase copy. */
function isKeepingKeyword(name: string): boolean {
  if (name.length < 4 || name.length > 6) return false;
  const first = name.charCodeAt(0) | 0x20;
  if (first !== 0x6c && first !== 0x69 && first !== 0x6f && first !== 0x61) return false;
  return KEPT_AFTER.has(name.toLowerCase());
}
