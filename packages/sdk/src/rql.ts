import { ExactNumber, literalText, RqlValueError } from './literal.ts';

/** Query text built by `rql`: every value in it was written as a literal. */
export class RqlQuery {
  readonly text: string;
  constructor(text: string) {
    this.text = text;
  }
  toString(): string {
    return this.text;
  }
}

/** Where the scan of the template's own text stands: only `code` may take a value. */
type ScanState = 'code' | 'string' | 'name' | 'comment';

/** The state after `text`, read from `state` by the lexer's rules for quotes and `--`. */
function scan(text: string, state: ScanState): ScanState {
  let current = state;
  for (let i = 0; i < text.length; i++) {
    const char = text[i];
    if (current === 'string') {
      // A doubled quote closes and reopens: the same as the lexer's escape.
      if (char === "'") current = 'code';
    } else if (current === 'name') {
      if (char === '"') current = 'code';
    } else if (current === 'comment') {
      if (char === '\n' || char === '\r') current = 'code';
    } else if (char === "'") {
      current = 'string';
    } else if (char === '"') {
      current = 'name';
    } else if (char === '-' && text[i + 1] === '-') {
      current = 'comment';
      i++;
    }
  }
  return current;
}

const STATE_NAMES: Record<Exclude<ScanState, 'code'>, string> = {
  string: "inside a '…' string: write the placeholder without quotes around it",
  name: 'inside a "…" name: values cannot be names',
  comment: 'inside a -- comment',
};

/**
 * Characters a literal may touch without the lexer reading the two as one token or as a
 * comment: white space and the punctuation that always stands alone. Beside anything else
 * (`x${1}`, `-${-1}`, `'a'${'b'}`) a space is put between them.
 */
const SEPARATES = /[\s(){},=<>]/;

function separated(before: string, after: string): boolean {
  return before === '' || after === '' || SEPARATES.test(before) || SEPARATES.test(after);
}

/**
 * A query built from a template, each placeholder written as a literal: strings quoted with
 * `''` for a quote, numbers with their exact digits (bigint and `rql.decimal('12.50')` too),
 * `true`/`false`, `NULL`, Dates as ISO 8601 strings, arrays as `(a, b)` for `IN`, and an
 * embedded `rql` query as its text. A value can never end a string, open a comment or add a
 * token, so it cannot change the query's shape. Values without a literal (undefined, NaN,
 * Infinity, objects, empty arrays) and placeholders inside quotes or comments throw
 * `RqlValueError`.
 *
 * @example
 * const q = rql`customers (country = ${country} AND id IN ${ids}) { id name } LIMIT ${n}`;
 */
export function rql(strings: TemplateStringsArray, ...values: readonly unknown[]): RqlQuery {
  let text = '';
  let state: ScanState = 'code';
  let lastWasValue = false;
  const append = (piece: string, isValue: boolean) => {
    if (piece === '') return;
    if ((isValue || lastWasValue) && !separated(text.at(-1) ?? '', piece[0]!)) text += ' ';
    text += piece;
    lastWasValue = isValue;
  };
  for (let i = 0; i < strings.length; i++) {
    const part = strings[i];
    // A tagged template's text is undefined where it has an invalid escape (`\u{`).
    if (part === undefined) throw new RqlValueError('rql: the template has an invalid escape.');
    append(part, false);
    state = scan(part, state);
    if (i === values.length) break;
    const where = `rql: placeholder ${i + 1}`;
    if (state !== 'code') throw new RqlValueError(`${where} is ${STATE_NAMES[state]}.`);
    const value = values[i];
    if (value instanceof RqlQuery) {
      append(value.text, true);
      state = scan(value.text, state);
    } else {
      append(literalText(value, where), true);
    }
  }
  return new RqlQuery(text);
}

/** A number written with exactly these digits, for DECIMAL and BIGINT values held as text. */
rql.decimal = (text: string): ExactNumber => new ExactNumber(text);
