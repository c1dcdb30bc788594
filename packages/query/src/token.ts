import type { Span } from './ast.ts';

/**
 * `name` covers identifiers and double-quoted names alike: keywords are names too, recognized
 * by the parser only where the grammar expects one, so fields may be called `order` or `limit`.
 */
export type TokenKind = 'name' | 'string' | 'number' | 'punctuation' | 'operator' | 'eof';

export interface Token {
  readonly kind: TokenKind;
  /**
   * name and string: the unescaped text; number: the exact source text, sign included;
   * punctuation and operator: the symbol as written (`<>` stays `<>`); eof: empty.
   */
  readonly value: string;
  /** A double-quoted name, which is never a keyword: `"order"` is always a field. */
  readonly quoted: boolean;
  readonly span: Span;
}

/** Descriptions longer than this are cut so one huge string cannot flood an error message. */
const MAX_DESCRIBED_LENGTH = 40;

/**
 * How an error message names a token it did not expect: `end of query`, `name "foo"`,
 * `string 'abc'`, `number 12` or `"{"`. Names and strings are shown as written, escapes and
 * all, so the reader can find them in the query.
 */
export function describeToken(token: Token, source: string): string {
  switch (token.kind) {
    case 'eof':
      return 'end of query';
    case 'name':
      return `name ${token.quoted ? shorten(sourceText(token, source)) : `"${shorten(token.value)}"`}`;
    case 'string':
      return `string ${shorten(sourceText(token, source))}`;
    case 'number':
      return `number ${shorten(token.value)}`;
    case 'punctuation':
    case 'operator':
      return `"${token.value}"`;
  }
}

function sourceText(token: Token, source: string): string {
  return source.slice(token.span.start, token.span.end);
}

/** First line only (a message's first line must stay one line), at most MAX_DESCRIBED_LENGTH. */
export function shorten(text: string): string {
  const chars = Array.from(text);
  const lineBreak = chars.findIndex((char) => char === '\n' || char === '\r');
  const limit = lineBreak === -1 ? MAX_DESCRIBED_LENGTH : Math.min(lineBreak, MAX_DESCRIBED_LENGTH);
  return chars.length > limit ? `${chars.slice(0, limit).join('')}...` : text;
}
