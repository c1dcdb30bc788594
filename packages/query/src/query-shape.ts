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
 * number, a LIKE pattern is compiled, AFTER is a cursor): those stay in the shape, as does a
 * JSON path's step after `->`. Every other
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
  const scanned = scannedShape(source, maxTokens);
  return scanned === undefined ? lexedShape(source, maxTokens) : scanned;
}

/** `queryShape` from the lexer's tokens: what `scannedShape` must agree with. */
export function lexedShape(
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
      } else if (token.kind === 'punctuation' && token.value === '->') {
        // A JSON path's step is part of what the query reads, not a value it compares.
        keepNext = true;
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

const TAB = 0x09;
const LINE_FEED = 0x0a;
const RETURN = 0x0d;
const SPACE = 0x20;
const BANG = 0x21;
const DOUBLE_QUOTE = 0x22;
const QUOTE = 0x27;
const MINUS = 0x2d;
const DOT = 0x2e;
const ZERO = 0x30;
const NINE = 0x39;
const LESS = 0x3c;
const EQUALS = 0x3d;
const GREATER = 0x3e;

/** `(`, `)`, `*`, `,`, `@`, `{`, `}`: the lexer's one-character punctuation. */
function isSinglePunctuation(code: number): boolean {
  return (
    code === 0x28 ||
    code === 0x29 ||
    code === 0x2a ||
    code === 0x2c ||
    code === 0x40 ||
    code === 0x7b ||
    code === 0x7d
  );
}

function isNameStart(code: number): boolean {
  return (code >= 0x61 && code <= 0x7a) || (code >= 0x41 && code <= 0x5a) || code === 0x5f;
}

function isDigit(code: number): boolean {
  return code >= ZERO && code <= NINE;
}

/**
 * `queryShape` in one pass over the text's characters, without token objects or name slices:
 * for the texts a client sends again and again (names, numbers, quoted strings without doubled
 * quotes, punctuation, operators, plain whitespace). Undefined for anything else (a comment,
 * a doubled quote, an error the lexer would report): `lexedShape` then decides, so the result is
 * always the lexer's.
 */
function scannedShape(source: string, maxTokens: number): QueryShape | null | undefined {
  const length = source.length;
  const literals: ShapeLiteral[] = [];
  let key = '';
  let copied = 0;
  let keepNext = false;
  let tokens = 0;
  let at = 0;
  for (;;) {
    let code = source.charCodeAt(at);
    while (code === SPACE || code === LINE_FEED || code === TAB || code === RETURN)
      code = source.charCodeAt(++at);
    if (at >= length) break;
    // Other trivia (a comment, rarer whitespace) is the lexer's to skip.
    if (
      (code === MINUS && source.charCodeAt(at + 1) === MINUS) ||
      code === 0x0b ||
      code === 0x0c ||
      code === 0xfeff
    )
      return undefined;
    // Any other character starts a token, or an error the lexer counts as one.
    if (++tokens > maxTokens) return null;
    const start = at;
    const keep = keepNext;
    keepNext = false;
    if (isNameStart(code)) {
      do code = source.charCodeAt(++at);
      while (isNameStart(code) || isDigit(code));
      keepNext = isKeepingKeywordAt(source, start, at);
      continue;
    }
    if (isDigit(code) || (code === MINUS && isDigit(source.charCodeAt(at + 1)))) {
      at = numberEnd(source, at);
      if (at < 0) return undefined;
      if (!keep) {
        key += `${source.slice(copied, start)}?n`;
        copied = at;
        literals.push({ kind: 'number', text: source.slice(start, at), span: { start, end: at } });
      }
      continue;
    }
    if (code === QUOTE || code === DOUBLE_QUOTE) {
      const close = source.indexOf(code === QUOTE ? "'" : '"', at + 1);
      // Unterminated, doubled or (for a name) empty: the lexer's cases.
      if (close < 0 || source.charCodeAt(close + 1) === code) return undefined;
      if (code === DOUBLE_QUOTE && close === at + 1) return undefined;
      at = close + 1;
      if (code === QUOTE && !keep) {
        key += `${source.slice(copied, start)}?s`;
        copied = at;
        literals.push({
          kind: 'string',
          value: source.slice(start + 1, close),
          span: { start, end: at },
        });
      }
      continue;
    }
    if (isSinglePunctuation(code) || code === EQUALS) {
      at++;
      continue;
    }
    if (code === LESS || code === GREATER) {
      const next = source.charCodeAt(at + 1);
      at += next === EQUALS || (code === LESS && next === GREATER) ? 2 : 1;
      continue;
    }
    if (code === BANG && source.charCodeAt(at + 1) === EQUALS) {
      at += 2;
      continue;
    }
    if (code === MINUS && source.charCodeAt(at + 1) === GREATER) {
      at += 2;
      keepNext = true;
      continue;
    }
    if (code === DOT) {
      at += source.startsWith('...', at) ? 3 : 1;
      continue;
    }
    return undefined;
  }
  return { key: copied === 0 ? source : key + source.slice(copied), literals, tokens };
}

/**
 * The end of the number starting at `at` (`-`? digits ('.' digits)? (('e' | 'E') ('+' | '-')?
 * digits)?), or -1 where the lexer reports an error: a missing digit, or a letter or dot
 * straight after.
 */
function numberEnd(source: string, start: number): number {
  let at = start;
  if (source.charCodeAt(at) === MINUS) at++;
  while (isDigit(source.charCodeAt(at))) at++;
  if (source.charCodeAt(at) === DOT) {
    if (!isDigit(source.charCodeAt(++at))) return -1;
    while (isDigit(source.charCodeAt(at))) at++;
  }
  let code = source.charCodeAt(at);
  if (code === 0x65 || code === 0x45) {
    code = source.charCodeAt(++at);
    if (code === 0x2b || code === MINUS) at++;
    if (!isDigit(source.charCodeAt(at))) return -1;
    while (isDigit(source.charCodeAt(at))) at++;
  }
  code = source.charCodeAt(at);
  return isNameStart(code) || code === DOT ? -1 : at;
}

/** `isKeepingKeyword` of `source[start, end)`, without slicing the name out. */
function isKeepingKeywordAt(source: string, start: number, end: number): boolean {
  const length = end - start;
  if (length < 4 || length > 6) return false;
  const first = source.charCodeAt(start) | 0x20;
  if (first !== 0x6c && first !== 0x69 && first !== 0x6f && first !== 0x61) return false;
  return KEPT_AFTER.has(source.slice(start, end).toLowerCase());
}
