/**
 * The linear-time LIKE matcher against the backtracking RegExp it replaced (kept here, only as
 * the reference), over random patterns and texts, and against patterns that made it explode.
 */
import fc from 'fast-check';
import { describe, expect, it } from 'vitest';
import { compileLike } from '../src/exec/like-pattern.ts';

/** The former compiler: one RegExp per pattern, `%` as `[^]*`, `_` as `.`, flags `su`/`isu`. */
function referenceLike(pattern: string, caseInsensitive: boolean): (text: string) => boolean {
  let source = '^';
  const characters = Array.from(pattern);
  for (let i = 0; i < characters.length; i++) {
    const char = characters[i] as string;
    if (char === '\\' && i + 1 < characters.length)
      source += escapeRegExp(characters[++i] as string);
    else if (char === '%') source += '[^]*';
    else if (char === '_') source += '.';
    else source += escapeRegExp(char);
  }
  const regexp = new RegExp(`${source}$`, caseInsensitive ? 'isu' : 'su');
  return (text) => regexp.test(text);
}

function escapeRegExp(char: string): string {
  return /[\\^$.*+?()[\]{}|/]/.test(char) ? `\\${char}` : char;
}

/** Letters of both cases and scripts, case-fold oddities, astral characters, line breaks. */
const LETTERS = [
  'a',
  'A',
  'b',
  'B',
  'k',
  'K',
  's',
  'S',
  'i',
  'I',
  'é',
  'É',
  'e\u0301',
  'ß',
  'ẞ',
  'σ',
  'ς',
  'Σ',
  'д',
  'Д',
  'ё',
  'Ё',
  '\u212A',
  '\u017F',
  '\u0130',
  '\u0131',
  '😀',
  '𐐀',
  '𐐨',
  '\n',
  '\r',
  '\u2028',
  '.',
  '*',
  '[',
  '$',
  ' ',
];
const SURROGATE_HALVES = ['\uD83D', '\uDE00', '\uD801', '\uDC00'];
const SYNTAX = ['%', '_', '\\'];

const patternUnit = fc.oneof(
  { weight: 6, arbitrary: fc.constantFrom(...LETTERS) },
  { weight: 4, arbitrary: fc.constantFrom(...SYNTAX) },
  { weight: 1, arbitrary: fc.constantFrom(...SURROGATE_HALVES) },
);
const textUnit = fc.oneof(
  { weight: 8, arbitrary: fc.constantFrom(...LETTERS) },
  { weight: 1, arbitrary: fc.constantFrom(...SYNTAX) },
  { weight: 1, arbitrary: fc.constantFrom(...SURROGATE_HALVES) },
);
const pattern = fc.string({ unit: patternUnit, maxLength: 10 });
const randomText = fc.string({ unit: textUnit, maxLength: 14 });

/** A text that the pattern (nearly) describes, so that matches are common, not rare. */
function textFor(likePattern: string): fc.Arbitrary<string> {
  const characters = Array.from(likePattern);
  return fc
    .array(fc.tuple(randomText, textUnit, fc.boolean(), fc.nat(20)), {
      minLength: characters.length,
      maxLength: characters.length,
    })
    .map((choices) =>
      characters
        .map((char, i) => {
          const [run, one, flipCase, mutation] = choices[i] as [string, string, boolean, number];
          if (mutation === 0) return one;
          if (char === '%') return run.slice(0, mutation % 4);
          if (char === '_') return one;
          if (char === '\\') return '';
          return flipCase ? char.toUpperCase() : char;
        })
        .join(''),
    );
}

const patternAndTexts = pattern.chain((likePattern) =>
  fc.tuple(
    fc.constant(likePattern),
    fc.array(fc.oneof(randomText, textFor(likePattern)), { minLength: 4, maxLength: 4 }),
  ),
);

describe.each([
  ['LIKE', false],
  ['ILIKE', true],
])('%s', (_name, caseInsensitive) => {
  it('agrees with the RegExp construction on random patterns and texts', () => {
    let matched = 0;
    fc.assert(
      fc.property(patternAndTexts, ([likePattern, texts]) => {
        const actual = compileLike(likePattern, caseInsensitive);
        const expected = referenceLike(likePattern, caseInsensitive);
        return texts.every((text) => {
          const answer = expected(text);
          if (answer) matched++;
          return actual(text) === answer;
        });
      }),
      { numRuns: 5000 },
    );
    // The comparison means something only if both answers are common.
    expect(matched).toBeGreaterThan(2000);
    expect(matched).toBeLessThan(30_000);
  });

  it('agrees on surrogate halves that an escape or a wildcard puts next to each other', () => {
    const cases: [string, string][] = [
      ['\uD83D%', '😀'],
      ['%\uDE00', '😀'],
      ['%\uDE00%', 'a😀b'],
      ['\uD83D\\\uDE00', '😀'],
      ['\uD83D_', '\uD83D\uDE00'],
      ['_\uDE00', '\uD83D\uDE00'],
      ['\uD83D_', '\uD83Da'],
      ['%\uD83D', 'a\uD83D'],
      ['%\uD83D', '😀'],
      ['a%\uDE00%b', 'a\uDE00😀b'],
      ['%\uDE00_%', '😀\uDE00x'],
      ['😀', '\uD83D\uDE00'],
    ];
    for (const [likePattern, text] of cases) {
      expect(compileLike(likePattern, caseInsensitive)(text), likePattern).toBe(
        referenceLike(likePattern, caseInsensitive)(text),
      );
    }
  });

  it('answers the patterns that made the RegExp backtrack without exploring them', () => {
    const as = 'a'.repeat(10_000);
    const like = (likePattern: string, text: string) =>
      compileLike(likePattern, caseInsensitive)(text);
    expect(like(`${'%a'.repeat(30)}b`, as)).toBe(false);
    expect(like(`${'%a'.repeat(30)}%`, as)).toBe(true);
    expect(like(`${'%_'.repeat(30)}b`, as)).toBe(false);
    expect(like(`%${'a'.repeat(40)}b%`, as)).toBe(false);
    expect(like(`%${'a_'.repeat(20)}b`, as)).toBe(false);
    expect(like(`${'%a'.repeat(30)}b`, `${as}b`)).toBe(true);
  });
});

describe('compileLike', () => {
  const like = (text: string, likePattern: string) => compileLike(likePattern, false)(text);
  const ilike = (text: string, likePattern: string) => compileLike(likePattern, true)(text);

  it('places the last segment at the end and the middle ones leftmost', () => {
    expect(like('abcabc', 'a%c')).toBe(true);
    expect(like('abcab', 'a%c')).toBe(false);
    expect(like('xaxbxc', '%a%b%c')).toBe(true);
    expect(like('xcxbxa', '%a%b%c')).toBe(false);
    expect(like('ab', 'a%b%')).toBe(true);
    expect(like('aXb', 'a%%b')).toBe(true);
    expect(like('aa', 'a%a')).toBe(true);
    expect(like('a', 'a%a')).toBe(false);
    expect(like('ab_cd', '%b\\_c%')).toBe(true);
    expect(like('abXcd', '%b\\_c%')).toBe(false);
  });

  it('counts `_` in code points on either side of `%`', () => {
    expect(like('😀😀x', '__%')).toBe(true);
    expect(like('😀x', '%__')).toBe(true);
    expect(like('😀', '%__')).toBe(false);
    expect(like('x😀y😀z', '%_y_%')).toBe(true);
  });

  it('folds with the Kelvin sign, long s and final sigma, not dotted and dotless i', () => {
    expect(ilike('\u212Aelvin', 'kelvin')).toBe(true);
    expect(ilike('Kelvin', '\u212A%')).toBe(true);
    expect(ilike('\u017Fun', 'SUN')).toBe(true);
    expect(ilike('ΟΔΟΣ', '%ος')).toBe(true);
    expect(ilike('\u0130stanbul', 'istanbul')).toBe(false);
    expect(ilike('\u0131', 'I')).toBe(false);
    expect(ilike('STRAẞE', 'straße')).toBe(true);
    expect(ilike('𐐀𐐁', '𐐨_')).toBe(true);
    expect(ilike('𐐀', '𐐨')).toBe(true);
    expect(ilike('𐐀x', '𐐨X%')).toBe(true);
    expect(ilike('x𐐀', '%X𐐨')).toBe(true);
    expect(ilike('x𐐀', '%X\uD801')).toBe(false);
  });
});
