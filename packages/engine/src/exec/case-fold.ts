import { CASE_FOLD_RUNS } from './case-fold-table.ts';

/** Non-ASCII code points that do not fold to themselves, and what they fold to. */
const FOLDS = foldsFromRuns(CASE_FOLD_RUNS);

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
 * (only their values change), so `_` still counts one per character; lone surrogates stay.
 */
export function foldCase(text: string): string {
  for (let i = 0; i < text.length; i++) {
    if (text.charCodeAt(i) >= 0x80) return text.slice(0, i).toLowerCase() + foldFrom(text, i);
  }
  // ASCII folds to lower case; the native conversion is the fast way there.
  return text.toLowerCase();
}

function foldFrom(text: string, from: number): string {
  let folded = '';
  let copiedTo = from;
  for (let i = from; i < text.length; i++) {
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
