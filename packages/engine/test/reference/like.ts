/**
 * LIKE by brute force over code points: `%` any run, `_` exactly one code point, `\` makes the
 * next character literal (a trailing `\` is itself literal). ILIKE compares characters after
 * folding each one on its own, with no normalisation.
 */

type Token = { kind: 'char'; char: string } | { kind: 'one' } | { kind: 'run' };

function tokens(pattern: string): Token[] {
  const chars = Array.from(pattern);
  const result: Token[] = [];
  for (let i = 0; i < chars.length; i++) {
    const char = chars[i] as string;
    if (char === '\\' && i + 1 < chars.length)
      result.push({ kind: 'char', char: chars[++i] as string });
    else if (char === '%') result.push({ kind: 'run' });
    else if (char === '_') result.push({ kind: 'one' });
    else result.push({ kind: 'char', char });
  }
  return result;
}

/** One character's case fold: `Σ`, `σ` and `ς` all fold to `σ`; `É` to `é`; `Ж` to `ж`. */
export function foldChar(char: string): string {
  const upper = char.toUpperCase();
  const folded = Array.from(upper).length === 1 ? upper.toLowerCase() : char.toLowerCase();
  return Array.from(folded).length === 1 ? folded : char;
}

export function like(text: string, pattern: string, caseInsensitive: boolean): boolean {
  const fold = caseInsensitive ? foldChar : (c: string) => c;
  const chars = Array.from(text, fold);
  const pat = tokens(pattern);
  // matches(i, j): does text from i match pattern from j? Memoised recursion.
  const memo = new Map<number, boolean>();
  const matches = (i: number, j: number): boolean => {
    const key = i * (pat.length + 1) + j;
    const known = memo.get(key);
    if (known !== undefined) return known;
    let result: boolean;
    const token = pat[j];
    if (token === undefined) result = i === chars.length;
    else if (token.kind === 'run')
      result = matches(i, j + 1) || (i < chars.length && matches(i + 1, j));
    else if (i >= chars.length) result = false;
    else if (token.kind === 'one') result = matches(i + 1, j + 1);
    else result = chars[i] === fold(token.char) && matches(i + 1, j + 1);
    memo.set(key, result);
    return result;
  };
  return matches(0, 0);
}
