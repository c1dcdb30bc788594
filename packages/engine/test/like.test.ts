/** LIKE and ILIKE: code points, escapes, per-character case folding, no normalisation. */
import { describe, expect, it } from 'vitest';
import { compileLike } from '../src/exec/like-pattern.ts';
import { compileSchema } from '../src/schema/compile-schema.ts';
import { parseSchemaConfig } from '../src/schema/schema-config.ts';
import { column, loadGeneration, runQuery, table } from './fixtures.ts';

function like(text: string, pattern: string): boolean {
  return compileLike(pattern, false)(text);
}

function ilike(text: string, pattern: string): boolean {
  return compileLike(pattern, true)(text);
}

describe('LIKE', () => {
  it('is case-sensitive and anchored at both ends', () => {
    expect(like('Ada', 'Ada')).toBe(true);
    expect(like('Ada', 'ada')).toBe(false);
    expect(like('Ada', 'Ad')).toBe(false);
    expect(like('Ada', 'da')).toBe(false);
    expect(like('', '')).toBe(true);
  });

  it('% matches any run of characters, the empty one and line breaks included', () => {
    expect(like('Ada', 'A%')).toBe(true);
    expect(like('Ada', '%a')).toBe(true);
    expect(like('Ada', 'A%d%a')).toBe(true);
    expect(like('', '%')).toBe(true);
    expect(like('a\nb\r\u2028c', 'a%c')).toBe(true);
    expect(like('Ada', 'B%')).toBe(false);
  });

  it('_ matches exactly one code point, astral ones and line breaks included', () => {
    expect(like('😀', '_')).toBe(true);
    expect(like('😀', '__')).toBe(false);
    expect(like('a😀b', 'a_b')).toBe(true);
    expect(like('𝔸𝔹', '_𝔹')).toBe(true);
    expect(like('a\nb', 'a_b')).toBe(true);
    expect(like('a\rb', 'a_b')).toBe(true);
    expect(like('a\u2028b', 'a_b')).toBe(true);
    expect(like('ab', 'a_b')).toBe(false);
    expect(like('', '_')).toBe(false);
  });

  it('\\ makes the next character literal', () => {
    expect(like('50%', '50\\%')).toBe(true);
    expect(like('500', '50\\%')).toBe(false);
    expect(like('a_b', 'a\\_b')).toBe(true);
    expect(like('axb', 'a\\_b')).toBe(false);
    expect(like('a\\b', 'a\\\\b')).toBe(true);
    expect(like('ab', 'a\\b')).toBe(true);
    expect(like('100%!', '%\\%_')).toBe(true);
    // A trailing backslash stands for itself.
    expect(like('a\\', 'a\\')).toBe(true);
    expect(like('a', 'a\\')).toBe(false);
  });

  it('treats every other character literally, regular-expression syntax included', () => {
    for (const char of [
      '.',
      '*',
      '+',
      '?',
      '(',
      ')',
      '[',
      ']',
      '{',
      '}',
      '|',
      '^',
      '$',
      '/',
      '-',
      ',',
      '#',
      '&',
      '~',
      ' ',
    ]) {
      expect(like(`a${char}b`, `a${char}b`), char).toBe(true);
      expect(like(`a${char}b`, `a${char}%`), char).toBe(true);
      expect(ilike(`A${char}B`, `a${char}b`), char).toBe(true);
      expect(like('axb', `a${char}b`), char).toBe(false);
    }
    expect(like('a-b', 'a-_')).toBe(true);
    expect(like('[x]', '[_]')).toBe(true);
    expect(like('x', '[x]')).toBe(false);
  });

  it('does not normalise: precomposed and decomposed forms differ', () => {
    const precomposed = '\u00E9';
    const decomposed = 'e\u0301';
    expect(like(precomposed, decomposed)).toBe(false);
    expect(like(decomposed, precomposed)).toBe(false);
    expect(like(precomposed, '_')).toBe(true);
    expect(like(decomposed, '_')).toBe(false);
    expect(like(decomposed, '__')).toBe(true);
    expect(like(decomposed, 'e%')).toBe(true);
  });
});

describe('ILIKE', () => {
  it('folds ASCII', () => {
    expect(ilike('Ada Lovelace', 'ada lovelace')).toBe(true);
    expect(ilike('ADA', 'a_a')).toBe(true);
    expect(ilike('ada', 'A%')).toBe(true);
    expect(ilike('ada', 'b%')).toBe(false);
  });

  it('folds accented Latin', () => {
    expect(ilike('ÉCOLE', 'école')).toBe(true);
    expect(ilike('Ñandú', 'ÑANDÚ')).toBe(true);
    expect(ilike('Ærøskøbing', 'æRØSKØBING')).toBe(true);
    expect(ilike('Über', 'über')).toBe(true);
    expect(ilike('Über', 'uber')).toBe(false);
  });

  it('folds Greek, final sigma included', () => {
    expect(ilike('ΣΟΦΟΣ', 'σοφος')).toBe(true);
    expect(ilike('ΣΟΦΟΣ', 'σοφοσ')).toBe(true);
    expect(ilike('σοφος', 'ΣΟΦΟΣ')).toBe(true);
    expect(ilike('Σωκράτης', 'σωκράτης')).toBe(true);
    expect(ilike('ΆΛΦΑ', 'άλφα')).toBe(true);
    expect(ilike('Σωκράτης', 'σωκρατης')).toBe(false);
  });

  it('folds Cyrillic', () => {
    expect(ilike('МОСКВА', 'москва')).toBe(true);
    expect(ilike('Ёжик', 'ёЖИК')).toBe(true);
    expect(ilike('Київ', 'КИЇВ')).toBe(true);
  });

  it('keeps the LIKE wildcards, escapes and code points', () => {
    expect(ilike('😀A', '_a')).toBe(true);
    expect(ilike('50% OFF', '50\\% off')).toBe(true);
    expect(ilike('50x OFF', '50\\% off')).toBe(false);
    expect(ilike('A\nB', 'a_b')).toBe(true);
  });

  it('does not normalise', () => {
    expect(ilike('\u00C9', 'e\u0301')).toBe(false);
    expect(ilike('E\u0301', 'e\u0301')).toBe(true);
    expect(ilike('E\u0301', '\u00E9')).toBe(false);
  });
});

describe('LIKE and ILIKE in queries', () => {
  const source = {
    tables: [
      table('words', [column('id', 'int', false), column('w', 'string'), column('j', 'json')]),
    ],
  };
  const schema = compileSchema(source, parseSchemaConfig({}));
  const generation = loadGeneration(schema, {
    words: [
      [1, 'ΣΟΦΟΣ', '{"a":1}'],
      [2, 'σοφος', null],
      [3, '\u00E9cole', '[1]'],
      [4, 'e\u0301cole', null],
      [5, null, '{"a":2}'],
      [6, 'a-b', null],
      [7, '😀', null],
    ],
  });
  const ids = (filter: string) =>
    runQuery(schema, generation, `words (${filter}) { id }`).data.map(
      (row: { id: number }) => row.id,
    );

  it('match per row, never NULL', () => {
    expect(ids("w LIKE '%'")).toEqual([1, 2, 3, 4, 6, 7]);
    expect(ids("w ILIKE 'σοφοσ'")).toEqual([1, 2]);
    expect(ids("w LIKE 'σοφος'")).toEqual([2]);
    expect(ids("w LIKE '_cole'")).toEqual([3]);
    expect(ids("w LIKE '__cole'")).toEqual([4]);
    expect(ids("w ILIKE 'ÉCOLE'")).toEqual([3]);
    expect(ids("w LIKE 'a-%'")).toEqual([6]);
    expect(ids("w LIKE '_'")).toEqual([7]);
  });

  it('work on JSON columns', () => {
    expect(ids('j LIKE \'{"a":%}\'')).toEqual([1, 5]);
  });
});
