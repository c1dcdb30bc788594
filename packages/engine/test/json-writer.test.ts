/**
 * `JsonWriter.words` writes exactly the bytes it was made from, across chunk boundaries, and
 * `jsonString` escapes text as `JSON.stringify` does, four bytes at a time or one.
 */
import { describe, expect, it } from 'vitest';
import { JsonWriter, wordBytes } from '../src/exec/json-writer.ts';

describe('JsonWriter.words', () => {
  it('writes texts of every length at every alignment, over several chunks', () => {
    // Up to about 130 bytes: short ones go word by word, long ones (a meta head) in one copy.
    const texts = Array.from({ length: 100 }, (_, n) => `,"${'kéy'.repeat(n).slice(0, n)}":`);
    const words = texts.map((text) => wordBytes(Buffer.from(text, 'utf8')));
    const out = new JsonWriter(Number.MAX_SAFE_INTEGER);
    const expected: string[] = [];
    // About 400 KB: the writes cross the 32 KiB chunks at every offset of a word.
    for (let round = 0; round < 400; round++) {
      for (let i = 0; i < texts.length; i++) {
        out.words(words[i]!);
        expected.push(texts[i]!);
        if ((round + i) % 3 === 0) {
          out.byte(0x30 + (i % 10));
          expected.push(String(i % 10));
        }
      }
    }
    const answer = out.finish();
    const text = expected.join('');
    expect(answer.text()).toBe(text);
    expect(answer.bytes).toBe(Buffer.byteLength(text));
    expect(answer.chunks.length).toBeGreaterThan(3);
  });

  it('writes a run longer than a chunk as a chunk of its own', () => {
    const long = `,"${'k'.repeat(70_000)}é":`;
    const out = new JsonWriter(Number.MAX_SAFE_INTEGER);
    out.byte(0x7b);
    out.words(wordBytes(Buffer.from(long)));
    out.byte(0x7d);
    expect(out.finish().text()).toBe(`{${long}}`);
  });

  it('keeps the length of the bytes, the words padded with zeros', () => {
    const made = wordBytes(Buffer.from(',"ab":'));
    expect(made.length).toBe(6);
    expect(made.words.length).toBe(2);
    expect([...made.bytes]).toEqual([...Buffer.from(',"ab":')]);
    expect(wordBytes(new Uint8Array(0))).toEqual({
      words: new Int32Array(0),
      length: 0,
      bytes: new Uint8Array(0),
    });
  });
});

describe('JsonWriter.jsonString', () => {
  it('escapes as JSON.stringify at every position of a word, and keeps UTF-8 as it is', () => {
    const specials = [
      '"',
      '\\',
      '\n',
      '\u0000',
      '\u001f',
      ' ',
      '\u007f',
      'é',
      '😀',
      '\u2028',
      '!',
      '#',
      '[',
      ']',
    ];
    const texts: string[] = [
      '',
      'a',
      'abcd',
      'abcdefgh',
      'plain ASCII text of some length, no escapes',
    ];
    for (const special of specials) {
      for (let at = 0; at < 9; at++) {
        texts.push(`${'x'.repeat(at)}${special}${'y'.repeat(9 - at)}`);
        texts.push(`${'x'.repeat(at)}${special}${special}`);
      }
    }
    texts.push(specials.join('').repeat(7));
    const out = new JsonWriter(Number.MAX_SAFE_INTEGER);
    for (const text of texts) {
      const bytes = Buffer.from(`..${text}..`, 'utf8');
      out.jsonString(bytes, 2, bytes.length - 2);
      out.byte(0x2c);
    }
    expect(out.finish().text()).toBe(texts.map((text) => `${JSON.stringify(text)},`).join(''));
  });
});
