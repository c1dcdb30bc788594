import { describe, expect, it } from 'vitest';
import { findUnstorableString } from '../src/api/unstorable-strings.ts';

describe('findUnstorableString', () => {
  it('names the first NUL or lone surrogate by its path, object keys included', () => {
    expect(findUnstorableString({ tables: [{ name: 'ok' }, { name: 'x\u0000' }] }, 'body')).toEqual(
      { path: 'body.tables[1].name', reason: 'contains a NUL character (\\u0000)' },
    );
    expect(findUnstorableString({ 'odd key': ['\udc00'] }, 'body')).toEqual({
      path: 'body["odd key"][0]',
      reason: 'contains a lone UTF-16 surrogate',
    });
    expect(findUnstorableString({ aliases: { 'a\u0000': 'b' } }, 'body')).toEqual({
      path: 'body.aliases',
      reason: 'has a key that contains a NUL character (\\u0000)',
    });
    expect(findUnstorableString('\u0000', 'query')?.path).toBe('query');
  });

  it('accepts what PostgreSQL stores: any well-formed text, numbers, null, buffers', () => {
    expect(
      findUnstorableString({ a: 'café 🛒', b: [1, null, true], c: Buffer.from([0]) }, 'body'),
    ).toBeNull();
    expect(findUnstorableString(undefined, 'body')).toBeNull();
  });

  it('walks a body nested far deeper than the call stack allows', () => {
    let deep: unknown = '\u0000';
    for (let i = 0; i < 200_000; i++) deep = [deep];
    expect(findUnstorableString(deep, 'body')?.reason).toMatch(/NUL/);
  });
});
