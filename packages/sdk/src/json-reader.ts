/**
 * A JSON reader that keeps every number's digits: `JSON.parse`'s grammar and values, except
 * that a number a double may not print as written (`9007199254740993`, `12.50`, `-0`,
 * `0.30000000000000004`) comes back as a `NumberText` holding its text. Every other number is
 * the `number` JSON.parse gives, and `String(value)` is its text exactly. Source-text access in JSON.parse (`context.source`) is
 * not in Node 20 nor every browser, hence a reader of our own.
 *
 * It loops over an explicit stack (deep nesting cannot overflow the call stack), refuses what
 * JSON.parse refuses (a `SyntaxError` with the position), and makes `__proto__` an own
 * property, as JSON.parse does, never the object's prototype.
 */

/**
 * A number kept as its JSON text: it has more than 15 significant digits, an exponent, a
 * fraction ending in zero, or is `-0`. Deciding exactly which of these a double prints as
 * written would cost a `String(number)` each (most of the reading time on DOUBLE columns).
 */
export class NumberText {
  readonly text: string;

  constructor(text: string) {
    this.text = text;
  }
}

/** Integers with at most this many digits are exact doubles that print as written. */
const SAFE_DIGITS = 15;

const QUOTE = 0x22;
const BACKSLASH = 0x5c;
const COMMA = 0x2c;
const COLON = 0x3a;
const MINUS = 0x2d;
const PLUS = 0x2b;
const DOT = 0x2e;
const ZERO = 0x30;
const NINE = 0x39;

const ESCAPES: Record<number, string> = {
  34: '"',
  92: '\\',
  47: '/',
  98: '\b',
  102: '\f',
  110: '\n',
  114: '\r',
  116: '\t',
};

type Container = unknown[] | Record<string, unknown>;

/** Parses `text` as JSON.parse would, numbers a double would change kept as `NumberText`. */
export function readJson(text: string): unknown {
  return new JsonReader(text).document();
}

class JsonReader {
  readonly #text: string;
  #at = 0;

  constructor(text: string) {
    this.#text = text;
  }

  document(): unknown {
    const text = this.#text;
    const containers: Container[] = [];
    const keys: string[] = [];
    let value: unknown;
    this.#skipSpace();
    for (;;) {
      // One value starts here; `{` and `[` with contents push and read their first entry.
      const c = text.charCodeAt(this.#at);
      if (c === 0x7b) {
        this.#at++;
        if (this.#skipSpace() === 0x7d) {
          this.#at++;
          value = {};
        } else {
          containers.push({});
          keys.push(this.#key());
          continue;
        }
      } else if (c === 0x5b) {
        this.#at++;
        if (this.#skipSpace() === 0x5d) {
          this.#at++;
          value = [];
        } else {
          containers.push([]);
          continue;
        }
      } else if (c === QUOTE) {
        value = this.#string();
      } else if (c === MINUS || (c >= ZERO && c <= NINE)) {
        value = this.#number();
      } else if (c === 0x74) {
        value = this.#literal('true', true);
      } else if (c === 0x66) {
        value = this.#literal('false', false);
      } else if (c === 0x6e) {
        value = this.#literal('null', null);
      } else {
        throw this.#unexpected();
      }
      // The value ends entries: each `]` or `}` after it makes its container the next value.
      for (;;) {
        const container = containers[containers.length - 1];
        if (container === undefined) {
          this.#skipSpace();
          if (this.#at !== text.length) throw this.#unexpected();
          return value;
        }
        const next = this.#skipSpace();
        if (Array.isArray(container)) {
          container.push(value);
          if (next === COMMA) {
            this.#at++;
            this.#skipSpace();
            break;
          }
          if (next !== 0x5d) throw this.#unexpected();
        } else {
          setOwn(container, keys.pop() as string, value);
          if (next === COMMA) {
            this.#at++;
            this.#skipSpace();
            keys.push(this.#key());
            break;
          }
          if (next !== 0x7d) throw this.#unexpected();
        }
        this.#at++;
        value = containers.pop();
      }
    }
  }

  /** Skips JSON whitespace; the code of the character after it (NaN at the end). */
  #skipSpace(): number {
    const text = this.#text;
    let at = this.#at;
    let c = text.charCodeAt(at);
    while (c === 0x20 || c === 0x0a || c === 0x0d || c === 0x09) c = text.charCodeAt(++at);
    this.#at = at;
    return c;
  }

  /** `"name" :` and the space after it. */
  #key(): string {
    if (this.#text.charCodeAt(this.#at) !== QUOTE) throw this.#unexpected();
    const key = this.#string();
    if (this.#skipSpace() !== COLON) throw this.#unexpected();
    this.#at++;
    this.#skipSpace();
    return key;
  }

  #string(): string {
    const text = this.#text;
    const start = this.#at + 1;
    let at = start;
    for (;;) {
      const c = text.charCodeAt(at);
      if (c === QUOTE) {
        this.#at = at + 1;
        return text.slice(start, at);
      }
      if (c === BACKSLASH) return this.#escapedString(start, at);
      // Control characters must be escaped; NaN is the end of the text.
      if (!(c >= 0x20)) {
        this.#at = at;
        throw this.#unexpected();
      }
      at++;
    }
  }

  /** The rest of a string from its first backslash at `at`. */
  #escapedString(start: number, from: number): string {
    const text = this.#text;
    let out = text.slice(start, from);
    let at = from;
    let run = at;
    for (;;) {
      const c = text.charCodeAt(at);
      if (c === QUOTE) {
        this.#at = at + 1;
        return out + text.slice(run, at);
      }
      if (c === BACKSLASH) {
        out += text.slice(run, at);
        const kind = text.charCodeAt(at + 1);
        if (kind === 0x75) {
          const hex = text.slice(at + 2, at + 6);
          if (!/^[0-9a-fA-F]{4}$/.test(hex)) {
            this.#at = at;
            throw this.#unexpected();
          }
          out += String.fromCharCode(Number.parseInt(hex, 16));
          at += 6;
        } else {
          const escaped = ESCAPES[kind];
          if (escaped === undefined) {
            this.#at = at + 1;
            throw this.#unexpected();
          }
          out += escaped;
          at += 2;
        }
        run = at;
        continue;
      }
      if (!(c >= 0x20)) {
        this.#at = at;
        throw this.#unexpected();
      }
      at++;
    }
  }

  /**
   * `-? (0 | [1-9][0-9]*) (. [0-9]+)? ([eE] [+-]? [0-9]+)?`: a `number` when a double surely
   * prints it as written, else a `NumberText`.
   */
  #number(): number | NumberText {
    const text = this.#text;
    const start = this.#at;
    let at = start;
    let c = text.charCodeAt(at);
    if (c === MINUS) c = text.charCodeAt(++at);
    const wholeStart = at;
    let whole = 0;
    if (c === ZERO) {
      c = text.charCodeAt(++at);
    } else if (c > ZERO && c <= NINE) {
      // Exact while it has at most 15 digits: the only case `whole` is used.
      while (c >= ZERO && c <= NINE) {
        whole = whole * 10 + (c - ZERO);
        c = text.charCodeAt(++at);
      }
    } else {
      this.#at = at;
      throw this.#unexpected();
    }
    const wholeDigits = at - wholeStart;
    if (c !== DOT && c !== 0x65 && c !== 0x45) {
      this.#at = at;
      // Short integers are exact and print as written; `-0` does not (String(-0) is "0").
      if (wholeDigits > SAFE_DIGITS) return new NumberText(text.slice(start, at));
      if (start === wholeStart) return whole;
      return whole === 0 ? new NumberText('-0') : -whole;
    }
    let fractionDigits = 0;
    let lastFraction = 0;
    if (c === DOT) {
      c = text.charCodeAt(++at);
      const fractionStart = at;
      while (c >= ZERO && c <= NINE) c = text.charCodeAt(++at);
      fractionDigits = at - fractionStart;
      if (fractionDigits === 0) {
        this.#at = at;
        throw this.#unexpected();
      }
      lastFraction = text.charCodeAt(at - 1);
    }
    let exponent = false;
    if (c === 0x65 || c === 0x45) {
      exponent = true;
      c = text.charCodeAt(++at);
      if (c === PLUS || c === MINUS) c = text.charCodeAt(++at);
      const exponentStart = at;
      while (c >= ZERO && c <= NINE) c = text.charCodeAt(++at);
      if (at === exponentStart) {
        this.#at = at;
        throw this.#unexpected();
      }
    }
    this.#at = at;
    const slice = text.slice(start, at);
    // Up to 15 significant digits print back as written (a double holds 15 decimal digits),
    // unless the fraction ends in a zero or String would use an exponent (below 1e-6).
    const significant = whole === 0 ? 0 : wholeDigits;
    if (
      !exponent &&
      significant + fractionDigits <= SAFE_DIGITS &&
      lastFraction !== ZERO &&
      (significant > 0 || leadingZeros(slice) < 6)
    ) {
      return Number(slice);
    }
    return new NumberText(slice);
  }

  #literal<T>(word: string, value: T): T {
    if (!this.#text.startsWith(word, this.#at)) throw this.#unexpected();
    this.#at += word.length;
    return value;
  }

  #unexpected(): SyntaxError {
    const at = this.#at;
    if (at >= this.#text.length) return new SyntaxError('Unexpected end of JSON input');
    const shown = JSON.stringify(this.#text.charAt(at));
    return new SyntaxError(`Unexpected character ${shown} in JSON at position ${at}`);
  }
}

/** Zeros right after `0.` in a number's text (`-0.000012` has 4). */
function leadingZeros(text: string): number {
  let at = text.indexOf('.') + 1;
  const from = at;
  while (text.charCodeAt(at) === ZERO) at++;
  return at - from;
}

/** An own data property, even for `__proto__` (an assignment would set the prototype). */
export function setOwn(target: Record<string, unknown>, key: string, value: unknown): void {
  if (key === '__proto__') {
    Object.defineProperty(target, key, {
      value,
      writable: true,
      enumerable: true,
      configurable: true,
    });
  } else {
    target[key] = value;
  }
}
