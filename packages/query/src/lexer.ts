import { QueryParseError, QueryTooComplexError } from './errors.ts';
import { DEFAULT_PARSE_LIMITS } from './parse-limits.ts';
import type { Token } from './token.ts';

const SINGLE_CHAR_PUNCTUATION = new Set(['(', ')', '{', '}', ',', '*', '@']);

function isNameStart(code: number): boolean {
  return (code >= 0x61 && code <= 0x7a) || (code >= 0x41 && code <= 0x5a) || code === 0x5f;
}

function isDigit(code: number): boolean {
  return code >= 0x30 && code <= 0x39;
}

function isNameChar(code: number): boolean {
  return isNameStart(code) || isDigit(code);
}

/** ASCII whitespace, plus the byte order mark some editors put at the start of a file. */
function isWhitespace(code: number): boolean {
  return (
    code === 0x20 ||
    code === 0x09 ||
    code === 0x0a ||
    code === 0x0d ||
    code === 0x0b ||
    code === 0x0c ||
    code === 0xfeff
  );
}

/** A character for an error message: printable ones quoted, the rest as U+XXXX. */
function describeChar(source: string, offset: number): string {
  const codePoint = source.codePointAt(offset);
  if (codePoint === undefined) return 'end of query';
  if (codePoint === 0x20) return 'a space';
  if (codePoint === 0x09) return 'a tab';
  if (codePoint === 0x0a || codePoint === 0x0d) return 'a line break';
  if (codePoint < 0x20 || (codePoint >= 0x7f && codePoint <= 0xa0)) {
    return `U+${codePoint.toString(16).toUpperCase().padStart(4, '0')}`;
  }
  return `"${String.fromCodePoint(codePoint)}"`;
}

/**
 * Turns query text into tokens on demand, so that the parser reports the first error in
 * reading order whether it is a bad character or a misplaced token.
 */
export class Lexer {
  readonly #source: string;
  readonly #maxTokens: number;
  #offset = 0;
  #count = 0;

  constructor(source: string, maxTokens: number = DEFAULT_PARSE_LIMITS.maxTokens) {
    this.#source = source;
    this.#maxTokens = maxTokens;
  }

  /** The next token; at the end, an `eof` token every time it is asked. */
  next(): Token {
    this.#skipTrivia();
    const source = this.#source;
    const start = this.#offset;
    if (start >= source.length) {
      return { kind: 'eof', value: '', quoted: false, span: { start, end: start } };
    }
    this.#count++;
    if (this.#count > this.#maxTokens) {
      throw new QueryTooComplexError(
        source,
        start,
        'maxTokens',
        `Query too long: more than ${this.#maxTokens} tokens (limit: ${this.#maxTokens} tokens per query). ` +
          'Select fewer fields, or use IN (...) instead of a chain of ORs.',
      );
    }
    const char = source[start]!;
    const code = source.charCodeAt(start);
    if (isNameStart(code)) return this.#readName(start);
    if (isDigit(code) || (char === '-' && isDigit(source.charCodeAt(start + 1)))) {
      return this.#readNumber(start);
    }
    switch (char) {
      case "'":
        return this.#readQuoted(start, 'string');
      case '"':
        return this.#readQuoted(start, 'name');
      case '.':
        return source.startsWith('...', start)
          ? this.#symbol('punctuation', '...', start)
          : this.#symbol('punctuation', '.', start);
      case '=':
        return this.#symbol('operator', '=', start);
      case '<':
        if (source[start + 1] === '=') return this.#symbol('operator', '<=', start);
        if (source[start + 1] === '>') return this.#symbol('operator', '<>', start);
        return this.#symbol('operator', '<', start);
      case '>':
        if (source[start + 1] === '=') return this.#symbol('operator', '>=', start);
        return this.#symbol('operator', '>', start);
      case '-':
        // `->` steps into a JSON value (a `-` before a digit starts a number, above).
        if (source[start + 1] === '>') return this.#symbol('punctuation', '->', start);
        break;
      case '!':
        if (source[start + 1] === '=') return this.#symbol('operator', '!=', start);
        this.#fail(start, 'Unexpected character "!". Did you mean "!="?');
    }
    if (SINGLE_CHAR_PUNCTUATION.has(char)) return this.#symbol('punctuation', char, start);
    this.#fail(start, `Unexpected character ${describeChar(source, start)}.`);
  }

  #skipTrivia(): void {
    const source = this.#source;
    let offset = this.#offset;
    while (offset < source.length) {
      const code = source.charCodeAt(offset);
      if (isWhitespace(code)) {
        offset++;
      } else if (code === 0x2d && source.charCodeAt(offset + 1) === 0x2d) {
        // A `--` comment runs to the end of the line.
        while (offset < source.length && source[offset] !== '\n' && source[offset] !== '\r') {
          offset++;
        }
      } else {
        break;
      }
    }
    this.#offset = offset;
  }

  #symbol(kind: 'punctuation' | 'operator', value: string, start: number): Token {
    this.#offset = start + value.length;
    return { kind, value, quoted: false, span: { start, end: this.#offset } };
  }

  #readName(start: number): Token {
    let end = start + 1;
    while (isNameChar(this.#source.charCodeAt(end))) end++;
    this.#offset = end;
    return {
      kind: 'name',
      value: this.#source.slice(start, end),
      quoted: false,
      span: { start, end },
    };
  }

  /**
   * `-`? digits ('.' digits)? (('e' | 'E') ('+' | '-')? digits)?, kept as written. A number
   * running straight into a letter or a dot (`12abc`, `1.2.3`) is an error rather than two
   * tokens, so that a typo is not silently read as something else.
   */
  #readNumber(start: number): Token {
    const source = this.#source;
    let end = start;
    if (source[end] === '-') end++;
    end = this.#digits(end);
    if (source[end] === '.') end = this.#requireDigits(start, end + 1);
    if (source[end] === 'e' || source[end] === 'E') {
      end++;
      if (source[end] === '+' || source[end] === '-') end++;
      end = this.#requireDigits(start, end);
    }
    const next = source.charCodeAt(end);
    if (isNameStart(next) || next === 0x2e) {
      this.#fail(
        end,
        `Invalid number: unexpected ${describeChar(source, end)} after ${source.slice(start, end)}.`,
      );
    }
    this.#offset = end;
    return { kind: 'number', value: source.slice(start, end), quoted: false, span: { start, end } };
  }

  #digits(offset: number): number {
    let end = offset;
    while (isDigit(this.#source.charCodeAt(end))) end++;
    return end;
  }

  #requireDigits(start: number, offset: number): number {
    if (!isDigit(this.#source.charCodeAt(offset))) {
      const sofar = this.#source.slice(start, offset);
      this.#fail(
        offset,
        `Invalid number: expected a digit after "${sofar}", found ${describeChar(this.#source, offset)}.`,
      );
    }
    return this.#digits(offset);
  }

  /**
   * A 'string' or a "quoted name": any characters, line breaks included, with the quote
   * doubled to stand for itself. An unterminated one is reported where it opens, which is
   * where the reader needs to look.
   */
  #readQuoted(start: number, kind: 'string' | 'name'): Token {
    const source = this.#source;
    const quote = source[start]!;
    // Pieces joined once at the end: no string rebuilt per doubled quote.
    const pieces: string[] = [];
    let from = start + 1;
    for (;;) {
      const close = source.indexOf(quote, from);
      if (close === -1) {
        this.#fail(
          start,
          kind === 'string'
            ? `Unterminated string: missing the closing "'".`
            : `Unterminated quoted name: missing the closing '"'.`,
        );
      }
      if (source[close + 1] === quote) {
        // The doubled quote stands for one: keep everything up to and including the first.
        pieces.push(source.slice(from, close + 1));
        from = close + 2;
        continue;
      }
      pieces.push(source.slice(from, close));
      const end = close + 1;
      if (kind === 'name' && end - start === 2) this.#fail(start, 'A quoted name cannot be empty.');
      this.#offset = end;
      const value = pieces.join('');
      return { kind, value, quoted: kind === 'name', span: { start, end } };
    }
  }

  #fail(offset: number, detail: string): never {
    throw new QueryParseError(this.#source, offset, detail);
  }
}
