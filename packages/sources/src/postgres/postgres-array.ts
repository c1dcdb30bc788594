import { SourceError } from '../errors.ts';

/** An array as PostgreSQL's text form holds it: element texts, NULLs and nested dimensions. */
export type PostgresArray = readonly (string | null | PostgresArray)[];

/** Message excerpts stop here, so a huge value cannot flood a log line. */
const MAX_SHOWN = 60;

function invalid(text: string, reason: string): SourceError {
  const shown = text.length > MAX_SHOWN ? `${text.slice(0, MAX_SHOWN)}...` : text;
  return new SourceError(
    'source_value_invalid',
    `Unexpected array text from the source (${reason}): "${shown}".`,
  );
}

const isSpace = (char: string | undefined) =>
  char === ' ' || char === '\t' || char === '\n' || char === '\r' || char === '\v' || char === '\f';

/**
 * Parses PostgreSQL's array text (`array_out`'s output, and what `array_in` accepts):
 *
 *     array    := [ dims '=' ] '{' [ item { delimiter item } ] '}'
 *     dims     := ( '[' lower ':' upper ']' )+      -- bounds other than 1; dropped here
 *     item     := array | '"' quoted '"' | unquoted
 *
 * A quoted element is taken as is after backslash escapes (`\"`, `\\`); an unquoted one loses
 * the blanks around it, and is NULL when it reads `NULL` in any case without escapes (so the
 * string "NULL" comes quoted). `delimiter` is the element type's (`,` for all but `box`, `;`).
 */
export function parsePostgresArray(text: string, delimiter = ','): PostgresArray {
  return new ArrayTextParser(text, delimiter).parse();
}

class ArrayTextParser {
  readonly #text: string;
  readonly #delimiter: string;
  #at = 0;

  constructor(text: string, delimiter: string) {
    this.#text = text;
    this.#delimiter = delimiter;
  }

  parse(): PostgresArray {
    this.#skipSpaces();
    if (this.#text[this.#at] === '[') this.#skipDimensions();
    this.#skipSpaces();
    const array = this.#array();
    this.#skipSpaces();
    if (this.#at !== this.#text.length) throw invalid(this.#text, 'text after the array');
    return array;
  }

  /** `[1:2][0:3]=`: explicit bounds, which JSON arrays cannot hold. */
  #skipDimensions(): void {
    const equals = this.#text.indexOf('=', this.#at);
    const dims = equals < 0 ? '' : this.#text.slice(this.#at, equals).replace(/\s/g, '');
    if (!/^(\[-?\d+:-?\d+\])+$/.test(dims)) throw invalid(this.#text, 'malformed dimensions');
    this.#at = equals + 1;
  }

  /** array := '{' [ item { delimiter item } ] '}' */
  #array(): PostgresArray {
    if (this.#text[this.#at] !== '{') throw invalid(this.#text, 'expected "{"');
    this.#at++;
    const items: (string | null | PostgresArray)[] = [];
    this.#skipSpaces();
    if (this.#text[this.#at] === '}') {
      this.#at++;
      return items;
    }
    for (;;) {
      this.#skipSpaces();
      items.push(this.#item());
      this.#skipSpaces();
      const next = this.#text[this.#at];
      this.#at++;
      if (next === '}') return items;
      if (next !== this.#delimiter)
        throw invalid(this.#text, `expected "${this.#delimiter}" or "}"`);
    }
  }

  /** item := array | '"' quoted '"' | unquoted */
  #item(): string | null | PostgresArray {
    const first = this.#text[this.#at];
    if (first === '{') return this.#array();
    if (first === '"') return this.#quoted();
    return this.#unquoted();
  }

  #quoted(): string {
    const text = this.#text;
    let value = '';
    let from = ++this.#at;
    for (;;) {
      const char = text[this.#at];
      if (char === undefined) throw invalid(text, 'unterminated quoted element');
      if (char === '"') break;
      if (char === '\\') {
        value += text.slice(from, this.#at);
        this.#at++;
        if (this.#at >= text.length) throw invalid(text, 'unterminated quoted element');
        from = this.#at;
      }
      this.#at++;
    }
    value += text.slice(from, this.#at);
    this.#at++;
    return value;
  }

  #unquoted(): string | null {
    const text = this.#text;
    let value = '';
    let escaped = false;
    // Blanks are kept only up to the last escaped or non-blank character.
    let keep = 0;
    for (;;) {
      const char = text[this.#at];
      if (char === undefined) throw invalid(text, 'unterminated array');
      if (char === this.#delimiter || char === '}') break;
      if (char === '"' || char === '{') throw invalid(text, `unexpected "${char}"`);
      if (char === '\\') {
        const next = text[this.#at + 1];
        if (next === undefined) throw invalid(text, 'unterminated array');
        value += next;
        keep = value.length;
        escaped = true;
        this.#at += 2;
        continue;
      }
      value += char;
      if (!isSpace(char)) keep = value.length;
      this.#at++;
    }
    value = value.slice(0, keep);
    if (value === '' && !escaped) throw invalid(text, 'empty element');
    if (!escaped && value.length === 4 && value.toUpperCase() === 'NULL') return null;
    return value;
  }

  #skipSpaces(): void {
    while (isSpace(this.#text[this.#at])) this.#at++;
  }
}
