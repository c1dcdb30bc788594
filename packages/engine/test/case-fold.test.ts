/** ILIKE's case folding: the committed table is exactly what `/…/iu` does on this Node.js. */
import fc from 'fast-check';
import { describe, expect, it } from 'vitest';
import { foldCase, foldCodePoint } from '../src/exec/case-fold.ts';
import { CASE_FOLD_RUNS } from '../src/exec/case-fold-table.ts';
import {
  codePointsFoldingIntoCasedSet,
  deriveCaseFoldClasses,
  encodeCaseFoldRuns,
} from './case-fold-classes.ts';

const classes = deriveCaseFoldClasses();

const fold = (char: string) => String.fromCodePoint(foldCodePoint(char.codePointAt(0) as number));

describe('the case-fold table', () => {
  it('is what the RegExp engine folds today (else run tools/generate-case-fold-table.ts)', () => {
    expect(codePointsFoldingIntoCasedSet()).toEqual([]);
    expect(CASE_FOLD_RUNS).toEqual(encodeCaseFoldRuns(classes));
  });

  it('folds every member of a class to one member of it, and nothing else', () => {
    const folded = new Set<number>();
    for (const members of classes) {
      const representative = foldCodePoint(members[0] as number);
      expect(members).toContain(representative);
      for (const member of members) {
        expect(foldCodePoint(member), member.toString(16)).toBe(representative);
        folded.add(member);
      }
    }
    for (let cp = 0; cp <= 0x10ffff; cp++) {
      if (!folded.has(cp) && foldCodePoint(cp) !== cp) {
        expect.fail(`${cp.toString(16)} folds although it has no case partner`);
      }
    }
  });
});

describe('what foldCase relies on', () => {
  it('lower case is the fold of every character, except where it lengthens the text', () => {
    for (let cp = 0; cp <= 0x10ffff; cp++) {
      if (cp === 0xd800) cp = 0xe000;
      const char = String.fromCodePoint(cp);
      const lower = char.toLowerCase();
      if (lower.length > char.length) continue;
      const [only, ...more] = Array.from(lower);
      const folded = foldCodePoint((only as string).codePointAt(0) as number);
      if (lower.length < char.length || more.length > 0 || folded !== foldCodePoint(cp)) {
        expect.fail(`${cp.toString(16)} lower-cases to ${JSON.stringify(lower)}`);
      }
    }
  });

  it('no class mixes BMP and astral characters, so folding keeps the UTF-16 length', () => {
    for (const members of classes) {
      expect(new Set(members.map((cp) => cp > 0xffff)).size, members.join()).toBe(1);
    }
  });
});

describe('foldCodePoint', () => {
  it('folds ASCII to lower case', () => {
    expect(fold('A')).toBe('a');
    expect(fold('z')).toBe('z');
    expect(fold('@')).toBe('@');
    expect(fold('[')).toBe('[');
  });

  it('puts the Kelvin sign with k, long s with s, and keeps dotted and dotless i apart', () => {
    expect(fold('\u212A')).toBe('k');
    expect(fold('\u017F')).toBe('s');
    expect(fold('\u0130')).not.toBe(fold('i'));
    expect(fold('\u0131')).not.toBe(fold('I'));
  });

  it('folds Greek final sigma with sigma, and Cyrillic, Latin, astral letters', () => {
    expect(fold('ς')).toBe(fold('Σ'));
    expect(fold('σ')).toBe(fold('Σ'));
    expect(fold('Ё')).toBe('ё');
    expect(fold('É')).toBe('é');
    expect(fold('ẞ')).toBe(fold('ß'));
    expect(fold('𐐀')).toBe('𐐨');
  });
});

describe('foldCase', () => {
  it('keeps the code points where they are', () => {
    const text = 'ΣΟΦΟΣ İstanbul ẞ 😀 \uD83D K 𐐀\uDE00';
    const folded = foldCase(text);
    expect(Array.from(folded)).toHaveLength(Array.from(text).length);
    expect(folded).toBe('σοφοσ İstanbul ß 😀 \uD83D k 𐐨\uDE00');
  });

  it('is foldCodePoint on every code point, final sigma and dotted I included', () => {
    const unit = fc.constantFrom(
      'Σ',
      'ς',
      'σ',
      ' ',
      'A',
      '\u0130',
      '\u0345',
      'ſ',
      '😀',
      '𐐀',
      '\uD83D',
      '\uDE00',
      'ǅ',
      'Ꭰ',
      'ꭰ',
    );
    fc.assert(
      fc.property(fc.string({ unit, maxLength: 12 }), (text) => {
        const expected = Array.from(text, (char) => fold(char)).join('');
        return foldCase(text) === expected;
      }),
      { numRuns: 3000 },
    );
  });

  it('returns ASCII in lower case and leaves text without case alone', () => {
    expect(foldCase('Ada LOVELACE 42')).toBe('ada lovelace 42');
    expect(foldCase('')).toBe('');
    expect(foldCase('日本語 😀')).toBe('日本語 😀');
  });

  it('does not normalise', () => {
    expect(foldCase('E\u0301')).toBe('e\u0301');
    expect(foldCase('\u00C9')).toBe('\u00E9');
  });
});
