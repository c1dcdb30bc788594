/**
 * Derives Unicode simple case-folding classes from the RegExp engine itself: two code points
 * are in one class when `/x/iu` matches `y`. The committed table in
 * `src/exec/case-fold-table.ts` is generated from this (`node tools/generate-case-fold-table.ts`)
 * and a test checks that the two still agree on this Node.js version.
 */

/** Every code point that takes part in case mapping or folding; the others fold to themselves. */
const CASED = /[\p{Cased}\p{Changes_When_Casefolded}\p{Changes_When_Casemapped}]/u;

const SYNTAX = /[\\^$.*+?()[\]{}|/-]/gu;

/** The classes with more than one member, each sorted, in the order of their smallest member. */
export function deriveCaseFoldClasses(): number[][] {
  const universe = casedCodePoints();
  const universeText = universe.map((cp) => String.fromCodePoint(cp)).join('');
  const seen = new Set<number>();
  const classes: number[][] = [];
  for (const cp of universe) {
    if (seen.has(cp)) continue;
    const self = new RegExp(String.fromCodePoint(cp).replace(SYNTAX, '\\$&'), 'giu');
    const members = Array.from(universeText.matchAll(self), (m) => m[0].codePointAt(0) as number);
    for (const member of members) seen.add(member);
    if (members.length > 1) classes.push(members.sort((a, b) => a - b));
  }
  return classes;
}

/**
 * The code points outside the cased set that `/[cased]/iu` still matches: none, when the cased
 * set is closed under case-insensitive matching (so its classes are all the classes there are).
 */
export function codePointsFoldingIntoCasedSet(): number[] {
  const universe = casedCodePoints();
  const anyCased = new RegExp(
    `[${universe.map((cp) => String.fromCodePoint(cp).replace(SYNTAX, '\\$&')).join('')}]`,
    'iu',
  );
  const strays: number[] = [];
  forEachCodePoint((cp, char) => {
    if (!CASED.test(char) && anyCased.test(char)) strays.push(cp);
  });
  return strays;
}

function casedCodePoints(): number[] {
  const cased: number[] = [];
  forEachCodePoint((cp, char) => {
    if (CASED.test(char)) cased.push(cp);
  });
  return cased;
}

/** Every Unicode scalar value (surrogates are never case-folded). */
function forEachCodePoint(visit: (cp: number, char: string) => void): void {
  for (let cp = 0; cp <= 0x10ffff; cp++) {
    if (cp === 0xd800) cp = 0xe000;
    visit(cp, String.fromCodePoint(cp));
  }
}

/**
 * Encodes classes as the flat run list of `CASE_FOLD_RUNS`: `start, count, step, delta` says
 * that `start + i * step` folds to `start + i * step + delta` for `i < count`. Each class folds to
 * the lower case of its upper case when that is one of its members (so ASCII folds to lower
 * case, as `toLowerCase` does), otherwise to its smallest member.
 */
export function encodeCaseFoldRuns(classes: readonly number[][]): number[] {
  const folds: [number, number][] = [];
  for (const members of classes) {
    const representative = representativeOf(members);
    for (const member of members) {
      if (member !== representative) folds.push([member, representative]);
    }
  }
  folds.sort((a, b) => a[0] - b[0]);
  const runs: [start: number, count: number, step: number, delta: number][] = [];
  for (const [from, to] of folds) {
    const run = runs.at(-1);
    const delta = to - from;
    if (run && run[3] === delta) {
      const [start, count, step] = run;
      if (count === 1 && (from - start === 1 || from - start === 2)) {
        run[1] = 2;
        run[2] = from - start;
        continue;
      }
      if (count > 1 && from === start + count * step) {
        run[1]++;
        continue;
      }
    }
    runs.push([from, 1, 1, delta]);
  }
  return runs.flat();
}

function representativeOf(members: readonly number[]): number {
  const smallest = members[0] as number;
  const natural = Array.from(String.fromCodePoint(smallest).toUpperCase().toLowerCase());
  const candidate = natural.length === 1 ? (natural[0]?.codePointAt(0) as number) : smallest;
  return members.includes(candidate) ? candidate : smallest;
}
