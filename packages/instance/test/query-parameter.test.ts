import { parse } from 'node:querystring';
import { describe, expect, it } from 'vitest';
import {
  DECODED_TEXTS_MAX_CHARS,
  decodedTextChars,
  queryParameter,
} from '../src/http/query-listener.ts';

describe('queryParameter', () => {
  const searches = [
    'q=',
    'q=fact',
    'q=fact%20(id%20%3D%201)%20%7B%20id%20%7D',
    'q=fact+(id+=+1)+{+id+}',
    'q=a%2Bb+c',
    'q=%',
    'q=%zz%20x',
    'q=%E2%82%AC',
    'q=%E2%82',
    'q=%F0%9F%98%80+emoji',
    'q=a=b',
    'q=a;b',
    'q=one&q=two',
    'q=one&x=2',
    'x=2&q=one',
    '%71=encoded-name',
    'Q=upper',
    'qq=1',
    '',
    'q',
    'q=%00nul',
    'q=caf%C3%A9',
  ];

  it.each(searches)('reads %j as querystring.parse does', (search) => {
    expect(queryParameter(search, 0)).toEqual(parse(search).q);
  });

  it('agrees with querystring.parse on random strings of the characters that matter', () => {
    const alphabet = ['q', '=', '&', '%', '+', '2', '0', 'B', 'z', 'é', ' ', 'E', '8', 'A'];
    let seed = 7;
    const next = () => {
      seed = (seed * 1103515245 + 12345) & 0x7fffffff;
      return seed;
    };
    for (let i = 0; i < 2000; i++) {
      let search = next() % 3 === 0 ? '' : 'q=';
      const length = next() % 12;
      for (let c = 0; c < length; c++) search += alphabet[next() % alphabet.length];
      expect(queryParameter(search, 0), search).toEqual(parse(search).q);
    }
  });

  it('decodes a query asked again once: the same text, within a bounded memory', () => {
    const search = `q=${encodeURIComponent('fact (id = 12345) { id qty }')}`;
    const first = queryParameter(search, 0);
    expect(first).toBe('fact (id = 12345) { id qty }');
    expect(queryParameter(`${search}`.slice(0), 0)).toBe(first);
    // A whole request target, its query string after the path.
    expect(queryParameter(`/query?${search}`, 7)).toBe('fact (id = 12345) { id qty }');
    expect(queryParameter('/query?q=one&q=two', 7)).toEqual(['one', 'two']);
    // A flood of distinct queries: the texts kept stay within their bound, and each is right.
    for (let i = 0; i < 20_000; i++) {
      const text = `fact (id = ${i}) { id qty amount ${'x'.repeat(i % 50)} }`;
      expect(queryParameter(`q=${encodeURIComponent(text)}`, 0)).toBe(text);
      expect(decodedTextChars()).toBeLessThanOrEqual(DECODED_TEXTS_MAX_CHARS);
    }
    expect(decodedTextChars()).toBeGreaterThan(0);
    // A value over the bound alone is decoded every time, never kept.
    const huge = 'é'.repeat(DECODED_TEXTS_MAX_CHARS);
    const before = decodedTextChars();
    expect(queryParameter(`q=${encodeURIComponent(huge)}`, 0)).toBe(huge);
    expect(decodedTextChars()).toBe(before);
  });
});
