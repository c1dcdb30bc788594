import { describe, expect, it } from 'vitest';
import { formatExcerpt, positionAt, QueryParseError } from '../src/index.ts';

describe('positionAt', () => {
  it('gives 1-based lines and columns', () => {
    const source = 'ab\ncd\r\nef\rgh';
    expect(positionAt(source, 0)).toEqual({ offset: 0, line: 1, column: 1 });
    expect(positionAt(source, 2)).toEqual({ offset: 2, line: 1, column: 3 });
    expect(positionAt(source, 4)).toEqual({ offset: 4, line: 2, column: 2 });
    expect(positionAt(source, 7)).toEqual({ offset: 7, line: 3, column: 1 });
    expect(positionAt(source, 10)).toEqual({ offset: 10, line: 4, column: 1 });
  });

  it('counts columns in code points', () => {
    expect(positionAt('😀é😀x', 5)).toEqual({ offset: 5, line: 1, column: 4 });
  });

  it('clamps offsets into the text', () => {
    expect(positionAt('abc', 99)).toEqual({ offset: 3, line: 1, column: 4 });
    expect(positionAt('abc', -1)).toEqual({ offset: 0, line: 1, column: 1 });
  });
});

describe('formatExcerpt', () => {
  it('shows the line of the offset with a caret under it', () => {
    expect(formatExcerpt('first\nsecond line\nthird', 13)).toBe('  second line\n         ^');
  });

  it('points past the end of a line', () => {
    expect(formatExcerpt('abc\ndef', 3)).toBe('  abc\n     ^');
    expect(formatExcerpt('', 0)).toBe('  \n  ^');
  });

  it('copies tabs into the caret line to stay aligned', () => {
    expect(formatExcerpt('\ta\tb', 3)).toBe('  \ta\tb\n  \t \t^');
  });
});

describe('QueryParseError', () => {
  it('carries its code, position, detail and a located message', () => {
    const error = new QueryParseError('a\nbc d', 5, 'Something is off.');
    expect(error).toBeInstanceOf(Error);
    expect(error.name).toBe('QueryParseError');
    expect(error.code).toBe('parse_error');
    expect(error.position).toEqual({ offset: 5, line: 2, column: 4 });
    expect(error.detail).toBe('Something is off.');
    expect(error.message).toBe(
      'Syntax error at line 2, column 4: Something is off.\n  bc d\n     ^',
    );
  });
});
