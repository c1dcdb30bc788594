import type { ParseLimitName } from './parse-limits.ts';

/** Where in the query text something is: the UTF-16 offset, and the 1-based line and column. */
export interface TextPosition {
  readonly offset: number;
  readonly line: number;
  /** Counted in code points, so a character outside the BMP counts once, as a reader sees it. */
  readonly column: number;
}

/**
 * Lines longer than this many code points are shown as a window around the caret, so that an
 * error in a huge single-line query does not copy all of it into logs and HTTP responses.
 */
const MAX_EXCERPT_WIDTH = 100;
/** How far before the caret a windowed excerpt starts: enough context to recognize the spot. */
const CONTEXT_BEFORE_CARET = 60;

/** Line starts at `\n`, `\r\n` and a lone `\r`, as editors count them. */
function lineBounds(source: string, offset: number): { start: number; end: number; line: number } {
  let line = 1;
  let start = 0;
  for (let i = 0; i < offset; i++) {
    const code = source.charCodeAt(i);
    if (code === 0x0a || (code === 0x0d && source.charCodeAt(i + 1) !== 0x0a)) {
      line++;
      start = i + 1;
    }
  }
  let end = offset;
  while (end < source.length) {
    const code = source.charCodeAt(end);
    if (code === 0x0a || code === 0x0d) break;
    end++;
  }
  return { start, end, line };
}

/** The line and code-point column of a UTF-16 offset (clamped into the text). */
export function positionAt(source: string, offset: number): TextPosition {
  const clamped = Math.max(0, Math.min(offset, source.length));
  const { start, line } = lineBounds(source, clamped);
  const column = Array.from(source.slice(start, clamped)).length + 1;
  return { offset: clamped, line, column };
}

/**
 * Two lines pointing at `offset`: the source line indented by two spaces, and under it a caret
 * below the offending character. Tabs before the caret are copied into the caret line so that
 * the caret stays aligned whatever the terminal's tab width.
 */
export function formatExcerpt(source: string, offset: number): string {
  const clamped = Math.max(0, Math.min(offset, source.length));
  const { start, end } = lineBounds(source, clamped);
  const chars = Array.from(source.slice(start, end));
  const caret = Array.from(source.slice(start, clamped)).length;
  let from = 0;
  let to = chars.length;
  if (chars.length > MAX_EXCERPT_WIDTH) {
    from = Math.max(0, caret - CONTEXT_BEFORE_CARET);
    to = Math.min(chars.length, from + MAX_EXCERPT_WIDTH);
    from = Math.max(0, to - MAX_EXCERPT_WIDTH);
  }
  const prefix = from > 0 ? '...' : '';
  const suffix = to < chars.length ? '...' : '';
  const shown = chars.slice(from, to);
  const padding = shown
    .slice(0, caret - from)
    .map((char) => (char === '\t' ? '\t' : ' '))
    .join('');
  return `  ${prefix}${shown.join('')}${suffix}\n  ${' '.repeat(prefix.length)}${padding}^`;
}

/** `<what> at line L, column C: <detail>` and the excerpt with its caret under `offset`. */
function locatedMessage(what: string, source: string, position: TextPosition, detail: string) {
  return (
    `${what} at line ${position.line}, column ${position.column}: ${detail}\n` +
    formatExcerpt(source, position.offset)
  );
}

/**
 * A syntax error in a query, with where it is. The message reads like a compiler's:
 *
 * ```
 * Syntax error at line 1, column 16: Expected "}", found end of query.
 *   users { id name
 *                  ^
 * ```
 */
export class QueryParseError extends Error {
  override readonly name = 'QueryParseError';
  readonly code = 'parse_error';
  readonly position: TextPosition;
  /** The message's first line without its location, e.g. `Expected "}", found end of query.` */
  readonly detail: string;

  constructor(source: string, offset: number, detail: string) {
    const position = positionAt(source, offset);
    super(locatedMessage('Syntax error', source, position, detail));
    this.position = position;
    this.detail = detail;
  }
}

/**
 * Well-formed so far, but over one of the parser's size or depth limits, which it checks before
 * reading on (so a huge query fails fast instead of exhausting the stack or the CPU). Kept apart
 * from `QueryParseError` because the fix is different: the query is not wrong, only too big.
 *
 * ```
 * Query too complex at line 1, column 200: Filter nested too deeply: … (limit: 64). …
 * ```
 */
export class QueryTooComplexError extends Error {
  override readonly name = 'QueryTooComplexError';
  readonly code = 'query_too_complex';
  /** The limit the query went over. */
  readonly limit: ParseLimitName;
  readonly position: TextPosition;
  /** The message's first line without its location. */
  readonly detail: string;

  constructor(source: string, offset: number, limit: ParseLimitName, detail: string) {
    const position = positionAt(source, offset);
    super(locatedMessage('Query too complex', source, position, detail));
    this.limit = limit;
    this.position = position;
    this.detail = detail;
  }
}
