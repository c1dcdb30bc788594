import { foldCase } from './case-fold.ts';
import { compileSegments } from './like-match.ts';
import { splitLikePattern } from './like-segments.ts';

/**
 * Compiles a LIKE pattern: `%` matches any run of characters, `_` exactly one code point, `\`
 * makes the next character literal. ILIKE folds case per character with Unicode simple case
 * folding (ASCII, accented Latin, Greek including final sigma, Cyrillic), without
 * normalisation, so precomposed and decomposed forms stay different.
 *
 * The test runs in at most O(text × pattern) time and usually in linear time: no backtracking
 * regular expression, so no pattern can make it explode.
 */
export function compileLike(pattern: string, caseInsensitive: boolean): (text: string) => boolean {
  const segments = splitLikePattern(pattern, caseInsensitive ? foldCase : (text) => text);
  return compileSegments(segments, caseInsensitive);
}
