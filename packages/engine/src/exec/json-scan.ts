import type { JsonStep } from '@replix/query';

/**
 * Finds the value at a JSON path in JSON text without parsing the whole document: one pass
 * over the characters, skipping what the path does not enter. A filter on a path reads one
 * value of each row, and parsing every row's document cost ten times DuckDB's time (bench
 * scenario i). The text is the column's stored JSON; where it is not valid JSON as the scan
 * reads it, the answer is `MALFORMED` and the caller parses it instead.
 */

/** Where a value lies in the text: `[start, end)`. */
export interface JsonSpan {
  readonly start: number;
  readonly end: number;
}

export const MALFORMED = Symbol('malformed JSON');

const QUOTE = 0x22;
const BACKSLASH = 0x5c;
const OPEN_BRACE = 0x7b;
const CLOSE_BRACE = 0x7d;
const OPEN_BRACKET = 0x5b;
const CLOSE_BRACKET = 0x5d;
const COMMA = 0x2c;
const COLON = 0x3a;

function skipSpace(text: string, at: number): number {
  let i = at;
  for (;;) {
    const code = text.charCodeAt(i);
    if (code !== 0x20 && code !== 0x0a && code !== 0x0d && code !== 0x09) return i;
    i++;
  }
}

/** The end of the string starting at `at` (its opening quote), or -1. */
function stringEnd(text: string, at: number): number {
  let i = at + 1;
  for (;;) {
    const close = text.indexOf('"', i);
    if (close < 0) return -1;
    // A quote is escaped by an odd number of backslashes before it.
    let backslashes = 0;
    for (let j = close - 1; text.charCodeAt(j) === BACKSLASH; j--) backslashes++;
    if (backslashes % 2 === 0) return close + 1;
    i = close + 1;
  }
}

/** The end of the value starting at `at`, or -1. */
function valueEnd(text: string, at: number): number {
  const code = text.charCodeAt(at);
  if (code === QUOTE) return stringEnd(text, at);
  if (code === OPEN_BRACE || code === OPEN_BRACKET) {
    let depth = 0;
    let i = at;
    while (i < text.length) {
      const c = text.charCodeAt(i);
      if (c === QUOTE) {
        i = stringEnd(text, i);
        if (i < 0) return -1;
        continue;
      }
      if (c === OPEN_BRACE || c === OPEN_BRACKET) depth++;
      else if (c === CLOSE_BRACE || c === CLOSE_BRACKET) {
        depth--;
        if (depth === 0) return i + 1;
      }
      i++;
    }
    return -1;
  }
  // A number, true, false or null: up to the next delimiter.
  let i = at;
  while (i < text.length) {
    const c = text.charCodeAt(i);
    if (c === COMMA || c === CLOSE_BRACE || c === CLOSE_BRACKET || c <= 0x20) break;
    i++;
  }
  return i > at ? i : -1;
}

/** Whether the key text `[start, end)` (quotes included) spells `key`. */
function keyIs(text: string, start: number, end: number, key: string): boolean {
  for (let i = start + 1; i < end - 1; i++) {
    // An escape: the key's text is not its value; decode it.
    if (text.charCodeAt(i) === BACKSLASH) return JSON.parse(text.slice(start, end)) === key;
  }
  return end - start - 2 === key.length && text.startsWith(key, start + 1);
}

/** The span of the member `key` of the object at `at` (the last one of that key), or null. */
function member(text: string, at: number, key: string): JsonSpan | null | typeof MALFORMED {
  let i = skipSpace(text, at + 1);
  let found: JsonSpan | null = null;
  if (text.charCodeAt(i) === CLOSE_BRACE) return null;
  for (;;) {
    if (text.charCodeAt(i) !== QUOTE) return MALFORMED;
    const keyEnd = stringEnd(text, i);
    if (keyEnd < 0) return MALFORMED;
    const matches = keyIs(text, i, keyEnd, key);
    i = skipSpace(text, keyEnd);
    if (text.charCodeAt(i) !== COLON) return MALFORMED;
    i = skipSpace(text, i + 1);
    const end = valueEnd(text, i);
    if (end < 0) return MALFORMED;
    // JSON.parse keeps the last of a repeated key: so does the scan.
    if (matches) found = { start: i, end };
    i = skipSpace(text, end);
    const next = text.charCodeAt(i);
    if (next === CLOSE_BRACE) return found;
    if (next !== COMMA) return MALFORMED;
    i = skipSpace(text, i + 1);
  }
}

/** The span of element `index` of the array at `at`, or null. */
function element(text: string, at: number, index: number): JsonSpan | null | typeof MALFORMED {
  let i = skipSpace(text, at + 1);
  if (text.charCodeAt(i) === CLOSE_BRACKET) return null;
  for (let n = 0; ; n++) {
    const end = valueEnd(text, i);
    if (end < 0) return MALFORMED;
    if (n === index) return { start: i, end };
    i = skipSpace(text, end);
    const next = text.charCodeAt(i);
    if (next === CLOSE_BRACKET) return null;
    if (next !== COMMA) return MALFORMED;
    i = skipSpace(text, i + 1);
  }
}

/**
 * The span of the value at `steps` in `text`; null when the path is missing (a key absent, an
 * index past the end, a step into a scalar); `MALFORMED` when the scan cannot read the text.
 */
export function scanJsonPath(
  text: string,
  steps: readonly JsonStep[],
): JsonSpan | null | typeof MALFORMED {
  const start = skipSpace(text, 0);
  const end = valueEnd(text, start);
  if (end < 0) return MALFORMED;
  let span: JsonSpan = { start, end };
  for (const step of steps) {
    const code = text.charCodeAt(span.start);
    let next: JsonSpan | null | typeof MALFORMED;
    if (typeof step === 'number')
      next = code === OPEN_BRACKET ? element(text, span.start, step) : null;
    else next = code === OPEN_BRACE ? member(text, span.start, step) : null;
    if (next === null || next === MALFORMED) return next;
    span = next;
  }
  return span;
}
