import { mulberry32 } from '@replix/testkit/mulberry32';

/** Seeded random text that means something to the lexer, a SQL reader or a terminal. */

/** A small seeded generator: a failure reproduces with its seed. */
export const random = mulberry32;

/** Pieces that mean something to the lexer, a SQL reader or a terminal. */
const PIECES = [
  "'",
  "''",
  '"',
  '\\',
  "\\'",
  '--',
  '-',
  '\n',
  '\r',
  '\r\n',
  '\t',
  '\0',
  '\x01',
  '\x1b[31m',
  '\x7f',
  '\u00a0',
  '\ufeff',
  '\u2028',
  '\u202e',
  'é',
  'ß',
  'Σ',
  '日本',
  '𝄞',
  '😀',
  '{',
  '}',
  '(',
  ')',
  ',',
  '=',
  '%',
  '_',
  '*',
  '...',
  '@lenient',
  ' OR 1=1',
  "') OR ('1'='1",
  'AFTER',
  'LIMIT 1',
  '/*',
  '*/',
  ';',
  'NULL',
  'true',
  '1e5',
  'x',
  ' ',
];

export function randomString(next: () => number): string {
  const length = Math.floor(next() * 12);
  let text = '';
  for (let i = 0; i < length; i++) {
    text +=
      next() < 0.7
        ? PIECES[Math.floor(next() * PIECES.length)]
        : String.fromCodePoint(Math.floor(next() * 0xd7ff));
  }
  return text;
}
