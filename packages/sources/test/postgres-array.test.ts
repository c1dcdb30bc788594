import { mulberry32 as random } from '@replix/testkit/mulberry32';
import { describe, expect, it } from 'vitest';
import { SourceError } from '../src/errors.ts';
import { type PostgresArray, parsePostgresArray } from '../src/postgres/postgres-array.ts';

describe('parsePostgresArray', () => {
  it('reads unquoted and quoted elements, with backslash escapes', () => {
    expect(parsePostgresArray('{Trailers,"Behind \\"the\\" Scenes",NULL}')).toEqual([
      'Trailers',
      'Behind "the" Scenes',
      null,
    ]);
    expect(parsePostgresArray('{"a\\\\b","c,d","{e}"," f "}')).toEqual([
      'a\\b',
      'c,d',
      '{e}',
      ' f ',
    ]);
    expect(parsePostgresArray('{a\\,b,c\\"d}')).toEqual(['a,b', 'c"d']);
  });

  it('tells an unquoted NULL (any case) from the quoted string "NULL"', () => {
    expect(parsePostgresArray('{NULL,"NULL",null,NuLl,\\NULL,NULLS}')).toEqual([
      null,
      'NULL',
      null,
      null,
      'NULL',
      'NULLS',
    ]);
  });

  it('reads the empty array and empty strings', () => {
    expect(parsePostgresArray('{}')).toEqual([]);
    expect(parsePostgresArray(' { } ')).toEqual([]);
    expect(parsePostgresArray('{""}')).toEqual(['']);
    expect(parsePostgresArray('{"",""}')).toEqual(['', '']);
  });

  it('nests multidimensional arrays', () => {
    expect(parsePostgresArray('{{1,2},{3,NULL}}')).toEqual([
      ['1', '2'],
      ['3', null],
    ]);
    expect(parsePostgresArray('{{{a}},{{"b c"}}}')).toEqual([[['a']], [['b c']]]);
    expect(parsePostgresArray('{{},{}}')).toEqual([[], []]);
  });

  it('drops dimension decoration, whose bounds JSON arrays cannot hold', () => {
    expect(parsePostgresArray('[0:1]={7,8}')).toEqual(['7', '8']);
    expect(parsePostgresArray('[-2:-1][1:2]={{a,b},{c,d}}')).toEqual([
      ['a', 'b'],
      ['c', 'd'],
    ]);
  });

  it('trims blanks around unquoted elements but keeps escaped and quoted ones', () => {
    expect(parsePostgresArray('{ a b , c\\  , " d " }')).toEqual(['a b', 'c ', ' d ']);
  });

  it('splits on the element type delimiter: box uses ";"', () => {
    expect(parsePostgresArray('{(1,1),(0,0);(3,3),(2,2)}', ';')).toEqual([
      '(1,1),(0,0)',
      '(3,3),(2,2)',
    ]);
  });

  it('refuses malformed text with a source_value_invalid error', () => {
    for (const text of [
      '',
      '{',
      '{a',
      '{"a}',
      '{a,}',
      '{,a}',
      '{a}x',
      'a',
      '[1:2{a}',
      '[x]={a}',
      '{a"b}',
      '{a\\',
    ]) {
      let error: unknown;
      try {
        parsePostgresArray(text);
      } catch (caught) {
        error = caught;
      }
      expect(error, text).toBeInstanceOf(SourceError);
      expect((error as SourceError).code, text).toBe('source_value_invalid');
    }
  });
});

/** PostgreSQL's `array_out`, as documented: quote what needs it, escape `"` and `\`. */
function serialize(array: PostgresArray, delimiter = ','): string {
  const items = array.map((item) => {
    if (item === null) return 'NULL';
    if (typeof item !== 'string') return serialize(item, delimiter);
    const needsQuotes =
      item === '' ||
      item.toUpperCase() === 'NULL' ||
      /[{}"\\\s]/.test(item) ||
      item.includes(delimiter);
    return needsQuotes ? `"${item.replace(/["\\]/g, (c) => `\\${c}`)}"` : item;
  });
  return `{${items.join(delimiter)}}`;
}

const ALPHABET = [
  'a',
  'Z',
  '0',
  ' ',
  ',',
  ';',
  '"',
  '\\',
  '{',
  '}',
  'N',
  'U',
  'L',
  '\t',
  'é',
  '😀',
];

function randomArray(next: () => number, depth: number): PostgresArray {
  const length = Math.floor(next() * 5);
  const nested = depth < 3 && next() < 0.3;
  return Array.from({ length }, () => {
    if (nested) return randomArray(next, depth + 1);
    const roll = next();
    if (roll < 0.15) return null;
    if (roll < 0.25) return next() < 0.5 ? 'NULL' : 'null';
    const size = Math.floor(next() * 6);
    return Array.from({ length: size }, () => ALPHABET[Math.floor(next() * ALPHABET.length)]).join(
      '',
    );
  });
}

describe('parsePostgresArray round trip', () => {
  it('reads back 5,000 random arrays as an array_out-style serializer writes them', () => {
    const next = random(13);
    for (let i = 0; i < 5_000; i++) {
      const delimiter = i % 5 === 0 ? ';' : ',';
      const array = randomArray(next, 0);
      const text = serialize(array, delimiter);
      expect(parsePostgresArray(text, delimiter), text).toEqual(array);
    }
  });
});
