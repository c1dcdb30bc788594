import { CASE_FOLD_RUNS } from './case-fold-table.ts';

/** Non-ASCII code points that do not fold to themselves, and what they fold to. */
const FOLDS = foldsFromRuns(CASE_FOLD_RUNS);

/** Code points that lower case leaves alone but folding does not (ς, ſ, µ, ͅ, …). */
const FOLDS_AFTER_LOWER_CASE = new RegExp(
  `[${Array.from(FOLDS.keys(), (cp) => String.fromCodePoint(cp))
    .filter((char) => char.toLowerCase() === char)
    .join('')}]`,
  'u',
);

/**
 * Unicode simple case folding of one code point, as `/…/iu` compares characters: two code
 * points match case-insensitively exactly when they fold to the same code point.
 */
export function foldCodePoint(cp: number): number {
  if (cp < 0x80) return cp >= 0x41 && cp <= 0x5a ? cp + 0x20 : cp;
  return FOLDS.get(cp) ?? cp;
}

/**
 * Folds every code point of `text`. The result has the same code points in the same places
 * and the same length (no case class mixes BMP and astral characters), so `_` still counts one
 * per character; lone surrogates stay.
 */
export function foldCase(text: string): string {
  // The native lower case already folds almost every character; it changes the length only
  // for characters it expands (İ), and then the slow path takes the original text.
  const lower = text.toLowerCase();
  if (lower.length !== text.length) return foldEach(text);
  return FOLDS_AFTER_LOWER_CASE.test(lower) ? foldEach(lower) : lower;
}

function foldEach(text: string): string {
  let folded = '';
  let copiedTo = 0;
  for (let i = 0; i < text.length; i++) {
    const cp = text.codePointAt(i) as number;
    const width = cp > 0xffff ? 2 : 1;
    const fold = foldCodePoint(cp);
    if (fold !== cp) {
      folded += text.slice(copiedTo, i) + String.fromCodePoint(fold);
      copiedTo = i + width;
    }
    i += width - 1;
  }
  return folded + text.slice(copiedTo);
}

function foldsFromRuns(runs: readonly number[]): Map<number, number> {
  const folds = new Map<number, number>();
  for (let r = 0; r < runs.length; r += 4) {
    const [start, count, step, delta] = runs.slice(r, r + 4) as [number, number, number, number];
    for (let i = 0; i < count; i++) {
      const cp = start + i * step;
      if (cp >= 0x80) folds.set(cp, cp + delta);
    }
  }
  return folds;
}
