/**
 * A LIKE pattern split at its `%`s into segments of literal text and `_` runs. Every match of
 * a segment spans the same number of code points, which is what lets the matcher place the
 * last segment from the end and take the leftmost match of each middle one: no backtracking.
 */

/** Literal text (whole code points) or a run of `_`, each matching exactly one code point. */
export type LikePiece =
  | { readonly kind: 'text'; readonly text: string }
  | { readonly kind: 'any'; readonly count: number };

/** The pattern between two `%`, or between a `%` and an end of the pattern. */
export interface LikeSegment {
  readonly pieces: readonly LikePiece[];
  /** How many code points of the text every match of this segment spans. */
  readonly codePoints: number;
}

/**
 * Splits `pattern` at `%` (one segment more than it has unescaped `%`; the first and last may be
 * empty). `\` makes the next character literal; a trailing lone `\` stands for itself.
 * `foldText` turns each literal run into the form the text will be compared in (ILIKE folds).
 */
export function splitLikePattern(
  pattern: string,
  foldText: (text: string) => string,
): LikeSegment[] {
  const segments: LikePiece[][] = [[]];
  const characters = Array.from(pattern);
  for (let i = 0; i < characters.length; i++) {
    const char = characters[i];
    const pieces = segments.at(-1) as LikePiece[];
    if (char === '%') segments.push([]);
    else if (char === '_') appendAny(pieces);
    else appendText(pieces, char === '\\' && i + 1 < characters.length ? characters[++i] : char);
  }
  return segments.map((pieces) => segmentOf(pieces, foldText));
}

function appendAny(pieces: LikePiece[]): void {
  const last = pieces.at(-1);
  if (last?.kind === 'any') pieces[pieces.length - 1] = { kind: 'any', count: last.count + 1 };
  else pieces.push({ kind: 'any', count: 1 });
}

function appendText(pieces: LikePiece[], char: string): void {
  const last = pieces.at(-1);
  if (last?.kind === 'text') pieces[pieces.length - 1] = { kind: 'text', text: last.text + char };
  else pieces.push({ kind: 'text', text: char });
}

function segmentOf(pieces: readonly LikePiece[], foldText: (text: string) => string): LikeSegment {
  let codePoints = 0;
  const folded = pieces.map((piece): LikePiece => {
    if (piece.kind === 'any') {
      codePoints += piece.count;
      return piece;
    }
    // Counted on the joined text: an escape can put the two halves of a surrogate pair together.
    const text = foldText(piece.text);
    for (const _ of text) codePoints++;
    return { kind: 'text', text };
  });
  return { pieces: folded, codePoints };
}
