import { CASE_FOLD_RUNS } from './case-fold-table.ts';

/** Astral code points that do not fold to themselves, and what they fold to. */
const ASTRAL_FOLDS = new Map<number, number>();
/** What each BMP code unit folds to (surrogates to themselves): a lookup with no hashing. */
const BMP_FOLDS = new Uint16Array(0x10000).map((_, unit) => unit);
for (let r = 0; r < CASE_FOLD_RUNS.length; r += 4) {
  const [start, count, step, delta] = CASE_FOLD_RUNS.slice(r, r + 4) as [
    number,
    number,
    number,
    number,
  ];
  for (let cp = start; cp < start + count * step; cp += step) {
    if (cp > 0xffff) ASTRAL_FOLDS.set(cp, cp + delta);
    else BMP_FOLDS[cp] = cp + delta;
  }
}

const NON_ASCII = /[\u0080-\uffff]/;

/**
 * Unicode simple case folding of one code point, as `/…/iu` compares characters: two code
 * points match case-insensitively exactly when they fold to the same code point.
 */
export function foldCodePoint(cp: number): number {
  return cp > 0xffff ? (ASTRAL_FOLDS.get(cp) ?? cp) : (BMP_FOLDS[cp] as number);
}

/**
 * Folds every code point of `text`. The result has the same code points in the same places
 * and the same length (no case class mixes BMP and astral characters), so `_` still counts one
 * per character; lone surrogates stay.
 */
export function foldCase(text: string): string {
  // The native lower case already folds almost every character (and all of ASCII); it changes
  // the length only for the one it expands (İ), and then the original text is folded instead.
  const lower = text.toLowerCase();
  if (lower.length !== text.length) return foldEach(text);
  return NON_ASCII.test(lower) ? foldEach(lower) : lower;
}

/** Whether `text` from `at` on starts with what folds to `folded`, with no string built. */
export function startsWithFolded(text: string, folded: string, at: number): boolean {
  if (at < 0 || at + folded.length > text.length) return false;
  for (let i = 0; i < folded.length; i++) {
    const unit = text.charCodeAt(at + i);
    const expected = folded.charCodeAt(i);
    if (unit === expected) continue;
    if (unit < 0xd800 || unit > 0xdfff) {
      if (BMP_FOLDS[unit] !== expected) return false;
      continue;
    }
    // A surrogate: compare the whole code point, which may have begun one unit earlier.
    const start =
      i > 0 && unit >= 0xdc00 && isHighSurrogate(text.charCodeAt(at + i - 1)) ? i - 1 : i;
    const cp = text.codePointAt(at + start) as number;
    if (foldCodePoint(cp) !== folded.codePointAt(start)) return false;
    i = start + (cp > 0xffff ? 1 : 0);
  }
  return true;
}

function isHighSurrogate(unit: number): boolean {
  return unit >= 0xd800 && unit <= 0xdbff;
}

function foldEach(text: string): string {
  let folded = '';
  let copiedTo = 0;
  for (let i = 0; i < text.length; i++) {
    const cp = text.codePointAt(i) as number;
    const fold = foldCodePoint(cp);
    if (fold !== cp) {
      folded += text.slice(copiedTo, i) + String.fromCodePoint(fold);
      copiedTo = i + (cp > 0xffff ? 2 : 1);
    }
    if (cp > 0xffff) i++;
  }
  return copiedTo === 0 ? text : folded + text.slice(copiedTo);
}
