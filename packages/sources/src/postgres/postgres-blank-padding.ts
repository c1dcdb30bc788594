/**
 * PostgreSQL's `character(n)` (`bpchar`) pads its values with blanks and ignores trailing blanks
 * when it compares, sorts or casts them to text. Replix serves such values without the padding,
 * so that its own comparisons (`=`, LIKE, ORDER BY) agree with PostgreSQL's.
 */

const BLANK_PADDED = /^(character|char|bpchar)(\s*\(\s*\d+\s*\))?$/i;

/** Whether a type as `format_type` prints it (`character(20)`, `bpchar`) is blank-padded. */
export function isBlankPadded(sourceType: string): boolean {
  return BLANK_PADDED.test(sourceType.trim());
}

/** The value without its trailing blanks (only U+0020: the padding PostgreSQL adds). */
export function withoutPadding(text: string): string {
  let end = text.length;
  while (end > 0 && text.charCodeAt(end - 1) === 32) end--;
  return end === text.length ? text : text.slice(0, end);
}
