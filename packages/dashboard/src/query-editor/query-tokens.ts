import { Lexer, QueryParseError } from '@replix/query';

/** How the editor shows a piece of query text. */
export type TokenClass =
  | 'keyword'
  | 'name'
  | 'string'
  | 'number'
  | 'operator'
  | 'punctuation'
  | 'comment'
  | 'invalid';

export interface EditorToken {
  readonly from: number;
  readonly to: number;
  readonly kind: TokenClass;
  /** A name's or string's unescaped text, a symbol as written. */
  readonly value: string;
}

/**
 * Words the parser reads as keywords where its grammar expects one. The lexer calls them all
 * names (a field may be called `order`); the editor marks them as keywords wherever they are
 * unquoted, as most editors do.
 */
const KEYWORDS = new Set([
  'ORDER',
  'BY',
  'ASC',
  'DESC',
  'LIMIT',
  'OFFSET',
  'AFTER',
  'AND',
  'OR',
  'NOT',
  'LIKE',
  'ILIKE',
  'IN',
  'IS',
  'NULL',
  'BETWEEN',
  'TRUE',
  'FALSE',
  'COUNT',
  'SUM',
  'AVG',
  'MIN',
  'MAX',
  'DISTINCT',
  'HAVING',
  'CONTAINS',
  'CONTAINED',
  'OVERLAPS',
  'CARDINALITY',
]);

/**
 * The query text as our lexer reads it, for highlighting and completion. Unlike the parser it
 * keeps going past a bad character (marked invalid) so the rest of the line stays coloured;
 * an unterminated string or quoted name runs to the end. Comments are the `--` runs the lexer
 * skips between tokens.
 */
export function editorTokens(text: string): EditorToken[] {
  const tokens: EditorToken[] = [];
  let base = 0;
  while (base < text.length) {
    const lexer = new Lexer(text.slice(base), Number.POSITIVE_INFINITY);
    try {
      for (let token = lexer.next(); token.kind !== 'eof'; token = lexer.next()) {
        const from = base + token.span.start;
        const to = base + token.span.end;
        pushComments(text, lastEnd(tokens, base), from, tokens);
        const previous = tokens.at(-1);
        // `@lenient`: the pragma's name reads as part of the keyword.
        const pragma = previous?.kind === 'punctuation' && previous.value === '@';
        const kind = pragma && token.kind === 'name' ? 'keyword' : classOf(token);
        tokens.push({ from, to, kind, value: token.value });
      }
      pushComments(text, lastEnd(tokens, base), text.length, tokens);
      break;
    } catch (error) {
      if (!(error instanceof QueryParseError)) throw error;
      const at = base + error.position.offset;
      pushComments(text, lastEnd(tokens, base), at, tokens);
      const unterminated = error.detail.startsWith('Unterminated');
      const to = unterminated
        ? text.length
        : at + String.fromCodePoint(text.codePointAt(at) ?? 32).length;
      tokens.push({ from: at, to, kind: 'invalid', value: text.slice(at, to) });
      base = to;
    }
  }
  return tokens;
}

function lastEnd(tokens: readonly EditorToken[], base: number): number {
  return Math.max(base, tokens.at(-1)?.to ?? 0);
}

function classOf(token: { kind: string; value: string; quoted: boolean }): TokenClass {
  switch (token.kind) {
    case 'name':
      return !token.quoted && KEYWORDS.has(token.value.toUpperCase()) ? 'keyword' : 'name';
    case 'string':
    case 'number':
    case 'operator':
    case 'punctuation':
      return token.kind;
    default:
      return 'invalid';
  }
}

/** Between two tokens there is only white space and comments: each `--` runs to the line's end. */
function pushComments(text: string, from: number, to: number, tokens: EditorToken[]): void {
  let start = text.indexOf('--', from);
  while (start !== -1 && start < to) {
    let end = start;
    while (end < to && text[end] !== '\n' && text[end] !== '\r') end++;
    tokens.push({ from: start, to: end, kind: 'comment', value: text.slice(start, end) });
    start = text.indexOf('--', end);
  }
}
