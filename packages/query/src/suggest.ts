/**
 * The candidate closest to `name`, for "Did you mean …?" hints on unknown pragmas, fields and
 * tables; undefined when none is close enough to be a plausible typo.
 *
 * Closeness is the Damerau-Levenshtein distance (optimal string alignment: insertions,
 * deletions, substitutions and swaps of two adjacent characters each cost 1) between the
 * lowercased names, counted in code points. A candidate qualifies within
 * max(1, floor(length of name / 3)) edits: short names allow one typo, longer ones more. Ties go
 * to the candidate listed first, so callers can order candidates by preference.
 */
export function suggest(name: string, candidates: readonly string[]): string | undefined {
  const typed = Array.from(name.toLowerCase());
  const threshold = Math.max(1, Math.floor(typed.length / 3));
  let best: string | undefined;
  let bestDistance = threshold + 1;
  for (const candidate of candidates) {
    const chars = Array.from(candidate.toLowerCase());
    // The distance is at least the difference in length: skip the table for hopeless ones.
    if (Math.abs(chars.length - typed.length) >= bestDistance) continue;
    const distance = editDistance(typed, chars);
    if (distance < bestDistance) {
      best = candidate;
      bestDistance = distance;
    }
  }
  return best;
}

/** Optimal string alignment distance, with three rolling rows instead of the whole table. */
function editDistance(a: readonly string[], b: readonly string[]): number {
  let beforePrevious: number[] = [];
  let previous = Array.from({ length: b.length + 1 }, (_, j) => j);
  for (let i = 1; i <= a.length; i++) {
    const current = [i];
    for (let j = 1; j <= b.length; j++) {
      const cost = a[i - 1] === b[j - 1] ? 0 : 1;
      let distance = Math.min(previous[j]! + 1, current[j - 1]! + 1, previous[j - 1]! + cost);
      if (i > 1 && j > 1 && a[i - 1] === b[j - 2] && a[i - 2] === b[j - 1]) {
        distance = Math.min(distance, beforePrevious[j - 2]! + 1);
      }
      current.push(distance);
    }
    beforePrevious = previous;
    previous = current;
  }
  return previous[b.length]!;
}
