import { describe, expect, it } from 'vitest';
import { resultEvent, resultHash } from '../src/http/live-events.ts';

/** An answer of `text` cut into chunks of `size` bytes, as the engine's writer hands them over. */
function answerOf(text: string, size: number) {
  const bytes = Buffer.from(text);
  const chunks: Buffer[] = [];
  for (let at = 0; at < bytes.length; at += size) chunks.push(bytes.subarray(at, at + size));
  return { chunks, text: () => text };
}

const envelope = (rows: string, timing: number) =>
  `{"data":[${rows}],"meta":{"table":"items","timing_ms":${timing},"snapshot":{"age_ms":${timing * 3}}}}`;

describe('resultEvent', () => {
  it('writes the envelope as one data line after the generation and boot, from any chunks', () => {
    const text = envelope('{"id":1,"note":"é, \\"x\\"\\\\n"}', 0.25);
    for (const size of [1, 7, 64, 4096]) {
      expect(resultEvent(12, 'boot', answerOf(text, size)).toString()).toBe(
        `id: 12.boot\ndata: ${text}\n\n`,
      );
    }
  });

  it('turns a line break in the bytes into data lines, so none ends the event early', () => {
    const text = '{"a":"x\r\ny\nz\rw"}';
    expect(resultEvent(3, 'b', answerOf(text, 5)).toString()).toBe(
      'id: 3.b\ndata: {"a":"x\ndata: y\ndata: z\ndata: w"}\n\n',
    );
  });
});

describe('resultHash', () => {
  const rows = Array.from({ length: 300 }, (_, i) => `{"id":${i}}`).join(',');

  it('is the same for answers that differ only in their timing and snapshot fields', () => {
    const first = resultHash(answerOf(envelope(rows, 0.5), 64).chunks);
    // The field falls at other places of the chunks, across a boundary too.
    for (const size of [1, 13, 64, 100, 8192])
      expect(resultHash(answerOf(envelope(rows, 12.75), size).chunks)).toBe(first);
  });

  it('differs when the result does', () => {
    const changed = rows.replace('{"id":299}', '{"id":300}');
    expect(resultHash(answerOf(envelope(changed, 0.5), 64).chunks)).not.toBe(
      resultHash(answerOf(envelope(rows, 0.5), 64).chunks),
    );
    expect(resultHash(answerOf('{"error":1}', 4).chunks)).not.toBe(
      resultHash(answerOf('{"error":2}', 4).chunks),
    );
  });
});
