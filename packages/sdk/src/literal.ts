/**
 * Query-language literals from JavaScript values, written by the lexer's rules
 * (packages/query/src/lexer.ts): strings in single quotes with `''` for a quote, numbers in
 * the lexer's number grammar, `true`, `false`, `NULL`, and a parenthesized list for `IN`.
 */

/** A value a template cannot write as a literal; thrown before any request is made. */
export class RqlValueError extends TypeError {
  override name = 'RqlValueError';
}

/** The lexer's number token: what `decimal()` accepts and what String(number) produces. */
const NUMBER_TEXT = /^-?[0-9]+(?:\.[0-9]+)?(?:[eE][+-]?[0-9]+)?$/;

/** A number written with exactly the digits given (DECIMAL and BIGINT values from text). */
export class ExactNumber {
  readonly text: string;
  constructor(text: string) {
    if (typeof text !== 'string' || !NUMBER_TEXT.test(text)) {
      throw new RqlValueError(
        'decimal() takes the text of a number: digits with an optional sign, fraction and exponent, like -12.50 or 1e6.',
      );
    }
    this.text = text;
  }
}

/** A value a template writes as one literal. */
export type RqlScalar = string | number | bigint | boolean | null | Date | ExactNumber;
/** A value a template accepts in a placeholder: a literal, or a list of them for `IN`. */
export type RqlValue = RqlScalar | readonly RqlScalar[];

export function quoteString(text: string): string {
  return `'${text.replaceAll("'", "''")}'`;
}

function describeKind(value: unknown): string {
  if (value === undefined) return 'undefined';
  if (typeof value === 'number') return String(value); // NaN, Infinity, -Infinity
  if (typeof value === 'string') return 'a string with a lone UTF-16 surrogate';
  if (Array.isArray(value)) return 'an array';
  if (value instanceof Date) return 'an invalid Date';
  if (typeof value === 'object') return `an object (${value?.constructor?.name ?? 'no prototype'})`;
  return `a ${typeof value}`;
}

/** The literal text of one scalar, or null when the value has none. */
function scalarText(value: unknown): string | null {
  switch (typeof value) {
    case 'string':
      // A lone surrogate has no UTF-8 form: the instance would receive U+FFFD instead.
      return value.isWellFormed() ? quoteString(value) : null;
    case 'number':
      // String() of a finite number is its shortest exact form, in the lexer's grammar.
      return Number.isFinite(value) ? String(value) : null;
    case 'bigint':
      return String(value);
    case 'boolean':
      return value ? 'true' : 'false';
    case 'object':
      if (value === null) return 'NULL';
      if (value instanceof ExactNumber) return value.text;
      if (value instanceof Date) {
        return Number.isNaN(value.getTime()) ? null : quoteString(value.toISOString());
      }
      return null;
    default:
      return null;
  }
}

/**
 * The literal text of a placeholder's value. `where` names the placeholder in the error, which
 * says what the value is, never the value itself (it may be a secret).
 */
export function literalText(value: unknown, where: string): string {
  if (Array.isArray(value)) {
    if (value.length === 0) {
      throw new RqlValueError(
        `${where} is an empty array: IN () is not valid; test for an empty list before querying.`,
      );
    }
    const items = value.map((item, index) => {
      const text = scalarText(item);
      if (text === null) {
        throw new RqlValueError(
          `${where}, item ${index}, is ${describeKind(item)}: list items must be strings, numbers, bigints, booleans, null, Dates or decimal() values.`,
        );
      }
      return text;
    });
    return `(${items.join(', ')})`;
  }
  const text = scalarText(value);
  if (text === null) {
    throw new RqlValueError(
      `${where} is ${describeKind(value)}: a query value must be a string, number, bigint, boolean, null, Date, decimal() value or an array of them.`,
    );
  }
  return text;
}

/** A LIKE pattern matching `text` literally: `%`, `_` and `\` escaped with `\`. */
export function escapeLike(text: string): string {
  return text.replace(/[\\%_]/g, '\\$&');
}
