/**
 * Compiles a LIKE pattern: `%` matches any run of characters, `_` exactly one code point, `\`
 * makes the next character literal. ILIKE folds case per character with Unicode simple case
 * folding (ASCII, accented Latin, Greek including final sigma, Cyrillic), without
 * normalisation, so precomposed and decomposed forms stay different.
 */
export function compileLike(pattern: string, caseInsensitive: boolean): (text: string) => boolean {
  let source = '^';
  let literalOnly = true;
  const characters = Array.from(pattern);
  for (let i = 0; i < characters.length; i++) {
    const char = characters[i] as string;
    if (char === '\\' && i + 1 < characters.length) {
      source += escapeRegExp(characters[++i] as string);
    } else if (char === '%') {
      source += '[^]*';
      literalOnly = false;
    } else if (char === '_') {
      source += '.';
      literalOnly = false;
    } else {
      source += escapeRegExp(char);
    }
  }
  if (literalOnly && !caseInsensitive) {
    const literal = pattern.replace(/\\(.)/gsu, '$1');
    return (text) => text === literal;
  }
  // `s`: `_` matches line terminators too.
  const regexp = new RegExp(`${source}$`, caseInsensitive ? 'isu' : 'su');
  return (text) => regexp.test(text);
}

/** Escapes the syntax characters, and only those: the `u` flag rejects any other escape. */
function escapeRegExp(char: string): string {
  return /[\\^$.*+?()[\]{}|/]/.test(char) ? `\\${char}` : char;
}
