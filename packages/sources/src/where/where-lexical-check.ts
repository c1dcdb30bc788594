import type { WhereDialect, WhereProblem } from './where-dialect.ts';

const IDENTIFIER_CHAR = /[\p{L}\p{N}_$]/u;

/**
 * Reads the predicate's tokens as the server would and refuses what could end the enclosing
 * parentheses or hide text from the parser: comments, statement separators, unbalanced
 * parentheses, unterminated or ambiguous quotes, NUL characters, dollar quotes.
 */
export function checkWhereLexically(text: string, dialect: WhereDialect): WhereProblem | null {
  const opened: number[] = [];
  let index = 0;
  const problem = (message: string, at = index): WhereProblem => ({ message, position: at + 1 });
  while (index < text.length) {
    const char = text[index] as string;
    const next = text[index + 1];
    if (char === '\u0000') return problem('a NUL character is not allowed');
    const closing = dialect.quotes[char];
    if (closing !== undefined) {
      const end = quotedEnd(text, index, closing, dialect.backslashMayEscape && closing !== ']');
      if (typeof end !== 'number') return end;
      index = end;
      continue;
    }
    if ((char === '-' && next === '-') || (char === '/' && next === '*')) {
      return problem('comments are not allowed in a where predicate');
    }
    if (char === '#' && dialect.hashComments) {
      return problem('comments are not allowed in a where predicate ("#" starts one)');
    }
    if (char === ';') return problem('a where predicate is one expression: ";" is not allowed');
    if (char === '$' && dialect.dollarQuotes && !IDENTIFIER_CHAR.test(text[index - 1] ?? '')) {
      return problem("dollar quotes and parameters are not allowed: write strings as '…'");
    }
    if (char === '(') opened.push(index);
    if (char === ')' && opened.pop() === undefined) {
      return problem('this ")" closes a parenthesis the predicate did not open');
    }
    index++;
  }
  const unclosed = opened.pop();
  if (unclosed !== undefined) return problem('this "(" is never closed', unclosed);
  return null;
}

/**
 * The index just past the quoted text that starts at `start`, or the problem with it. A doubled
 * closing character stands for itself. With `backslashMayEscape`, a backslash takes the next
 * character with it, and one before the closing character is refused as ambiguous.
 */
function quotedEnd(
  text: string,
  start: number,
  closing: string,
  backslashMayEscape: boolean,
): number | WhereProblem {
  let index = start + 1;
  while (index < text.length) {
    const char = text[index];
    if (char === '\u0000')
      return { message: 'a NUL character is not allowed', position: index + 1 };
    if (backslashMayEscape && char === '\\') {
      if (text[index + 1] === closing) {
        return {
          message: `a backslash before ${closing} reads differently under different server settings: double the ${closing} instead`,
          position: index + 1,
        };
      }
      index += 2;
      continue;
    }
    if (char === closing) {
      if (text[index + 1] !== closing) return index + 1;
      index += 2;
      continue;
    }
    index++;
  }
  return { message: `this ${text[start]} is never closed`, position: start + 1 };
}
