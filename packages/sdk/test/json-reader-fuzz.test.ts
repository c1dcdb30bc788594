import { describe, expect, it } from 'vitest';
import { NumberText, readJson } from '../src/json-reader.ts';
import { random, randomString } from './random-text.ts';

/** readJson's value with every NumberText as the double JSON.parse gives for its text. */
function asParsed(value: unknown): unknown {
  if (value instanceof NumberText) return Number(value.text);
  if (Array.isArray(value)) return value.map(asParsed);
  if (value === null || typeof value !== 'object') return value;
  const out: Record<string, unknown> = {};
  for (const key of Object.keys(value)) {
    Object.defineProperty(out, key, {
      value: asParsed((value as Record<string, unknown>)[key]),
      enumerable: true,
      writable: true,
      configurable: true,
    });
  }
  return out;
}

/** What JSON.parse makes of `text`, or that it refuses it. */
function outcome(read: (text: string) => unknown, text: string): unknown {
  try {
    return { value: read(text) };
  } catch (error) {
    return { refused: (error as Error).name };
  }
}

const NUMBER_TEXTS = [
  '0',
  '-0',
  '1',
  '-17',
  '123456789012345',
  '1234567890123456',
  '9007199254740993',
  '18446744073709551615',
  '-9223372036854775808',
  '12.50',
  '3.00',
  '0.1',
  '0.30000000000000004',
  '1234567890123456.7891',
  '0.000001',
  '0.0000001',
  '1e21',
  '1E+2',
  '-1.5e-7',
  '5e-324',
  '1.7976931348623157e308',
  '1e400',
  '0.0',
  '-0.0',
];

/** A random JSON text: objects, arrays, strings with escapes and any script, numbers. */
function randomJson(next: () => number, depth: number): string {
  const kind = Math.floor(next() * (depth > 4 ? 5 : 7));
  switch (kind) {
    case 0:
      return NUMBER_TEXTS[Math.floor(next() * NUMBER_TEXTS.length)]!;
    case 1:
      return JSON.stringify(randomString(next));
    case 2:
      return ['true', 'false', 'null'][Math.floor(next() * 3)]!;
    case 3:
      return String((next() - 0.5) * 10 ** Math.floor(next() * 40 - 20));
    case 4:
      return `"\\u${Math.floor(next() * 0x10000)
        .toString(16)
        .padStart(4, '0')}\\n\\t\\"\\\\\\/"`;
    case 5: {
      const items = Array.from({ length: Math.floor(next() * 4) }, () =>
        randomJson(next, depth + 1),
      );
      return `[${items.join(next() < 0.5 ? ',' : ' , ')}]`;
    }
    default: {
      const keys = ['a', '__proto__', 'constructor', '0', '10', 'b', randomString(next)];
      const entries = Array.from({ length: Math.floor(next() * 4) }, () => {
        const key = JSON.stringify(keys[Math.floor(next() * keys.length)]);
        return `${key}:${randomJson(next, depth + 1)}`;
      });
      return `{ ${entries.join(',\n')} }`;
    }
  }
}

/** `text` with one character dropped, doubled, or replaced by one JSON gives meaning to. */
function mutate(text: string, next: () => number): string {
  const at = Math.floor(next() * (text.length + 1));
  const pieces = [
    '"',
    ',',
    ':',
    '{',
    '}',
    '[',
    ']',
    '\\',
    '-',
    '.',
    'e',
    '0',
    ' ',
    '\n',
    '\x01',
    '\ufeff',
    't',
  ];
  const piece = pieces[Math.floor(next() * pieces.length)]!;
  const way = Math.floor(next() * 3);
  if (way === 0) return text.slice(0, at) + text.slice(at + 1);
  if (way === 1) return text.slice(0, at) + text.charAt(at) + text.slice(at);
  return text.slice(0, at) + piece + text.slice(at + 1);
}

describe('readJson against JSON.parse', () => {
  it('reads random documents to the same values, keeping digits a double would change', () => {
    const next = random(7);
    for (let i = 0; i < 3000; i++) {
      const text = randomJson(next, 0);
      const read = readJson(text);
      expect(asParsed(read), text).toEqual(JSON.parse(text));
    }
  });

  it('accepts and refuses the same mutated documents', () => {
    const next = random(11);
    for (let i = 0; i < 5000; i++) {
      const text = mutate(randomJson(next, 0), next);
      const ours = outcome((t) => asParsed(readJson(t)), text);
      expect(ours, JSON.stringify(text)).toEqual(outcome(JSON.parse, text));
    }
  });

  it('gives a number only when String gives back its text, and the text otherwise', () => {
    const next = random(5);
    const texts = [
      ...NUMBER_TEXTS,
      ...Array.from({ length: 20_000 }, () =>
        String((next() - 0.5) * 10 ** Math.floor(next() * 30 - 10)),
      ),
      ...Array.from({ length: 2000 }, () => (next() * 1000).toFixed(Math.floor(next() * 6))),
    ];
    for (const text of texts) {
      const read = readJson(text);
      if (read instanceof NumberText) expect(read.text).toBe(text);
      else expect(String(read), text).toBe(text);
    }
    expect(readJson('[1234567890123456.7891, 9007199254740993, 12.50]')).toEqual([
      new NumberText('1234567890123456.7891'),
      new NumberText('9007199254740993'),
      new NumberText('12.50'),
    ]);
  });

  it('makes __proto__ an own property and never a prototype', () => {
    const read = readJson('{"__proto__": {"polluted": true}, "a": {"__proto__": null}}') as Record<
      string,
      unknown
    >;
    expect(Object.getPrototypeOf(read)).toBe(Object.prototype);
    expect(Object.keys(read)).toEqual(['__proto__', 'a']);
    expect(Object.getOwnPropertyDescriptor(read, '__proto__')?.value).toEqual({ polluted: true });
    expect(({} as Record<string, unknown>).polluted).toBeUndefined();
    expect(Object.getPrototypeOf(read.a)).toBe(Object.prototype);
    expect(asParsed(read)).toEqual(
      JSON.parse('{"__proto__": {"polluted": true}, "a": {"__proto__": null}}'),
    );
  });

  it('reads nesting far deeper than the call stack allows recursion, as JSON.parse does', () => {
    const depth = 100_000;
    const arrays = `${'['.repeat(depth)}7${']'.repeat(depth)}`;
    let value = readJson(arrays);
    for (let i = 0; i < depth; i++) value = (value as unknown[])[0];
    expect(value).toBe(7);
    const objects = `${'{"a":'.repeat(depth)}null${'}'.repeat(depth)}`;
    expect(readJson(objects)).toBeTypeOf('object');
    expect(() => readJson('['.repeat(depth))).toThrow(SyntaxError);
  }, 30_000);

  it('refuses what JSON.parse refuses, with a SyntaxError naming the position', () => {
    for (const text of [
      '',
      ' ',
      '[1,]',
      '{"a":1,}',
      '01',
      '1.',
      '.5',
      '+1',
      '-',
      '[1 2]',
      '"a',
      'tru',
      'nul',
      '{"a" 1}',
      '{a:1}',
      '"\t"',
      '"\\x"',
      '"\\u12"',
      '1 x',
      '\ufeff1',
      'NaN',
      '[',
      '{',
    ]) {
      expect(() => JSON.parse(text), text).toThrow(SyntaxError);
      expect(() => readJson(text), text).toThrow(SyntaxError);
    }
    expect(() => readJson('[1, 2 x]')).toThrow('Unexpected character "x" in JSON at position 6');
    expect(() => readJson('[1, 2')).toThrow('Unexpected end of JSON input');
  });
});
