import { parse } from 'node:querystring';
import { describe, expect, it } from 'vitest';
import { queryParameter } from '../src/query-listener.ts';

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
    expect(queryParameter(search)).toEqual(parse(search).q);
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
      expect(queryParameter(search), search).toEqual(parse(search).q);
    }
  });
});
