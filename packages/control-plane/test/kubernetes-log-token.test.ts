import { describe, expect, it } from 'vitest';
import {
  advance,
  compareTimes,
  decodeLogToken,
  encodeLogToken,
  linesAfter,
  parseTimestampedLog,
  sinceSecondsOf,
} from '../src/adapters/drivers/kubernetes/log-token.ts';

const LOG = [
  '2026-01-02T03:04:05.000000001Z first',
  '2026-01-02T03:04:05.000000001Z second, same time',
  '2026-01-02T03:04:05.5Z third',
  'no timestamp: dropped',
  '2026-01-02T03:04:06Z fourth with  spaces',
  '',
].join('\n');

describe('the Kubernetes driver log token', () => {
  it('parses timestamped pod logs and compares their times to the nanosecond', () => {
    const lines = parseTimestampedLog('pod/a', LOG);
    expect(lines.map((line) => line.message)).toEqual([
      'first',
      'second, same time',
      'third',
      'fourth with  spaces',
    ]);
    expect(compareTimes('2026-01-02T03:04:05.000000001Z', '2026-01-02T03:04:05Z')).toBe(1);
    expect(compareTimes('2026-01-02T03:04:05.000000001Z', '2026-01-02T03:04:05.000000002Z')).toBe(
      -1,
    );
    expect(compareTimes('2026-01-02T03:04:05.5Z', '2026-01-02T03:04:05.500Z')).toBe(0);
    expect(compareTimes('2026-01-02T03:04:06Z', '2026-01-02T03:04:05.999999999Z')).toBe(1);
  });

  it('pages through lines that share a timestamp without repeating or losing one', () => {
    const lines = parseTimestampedLog('pod/a', LOG);
    const afterOne = advance({}, lines.slice(0, 1));
    expect(afterOne).toEqual({ 'pod/a': { time: '2026-01-02T03:04:05.000000001Z', seen: 1 } });
    // The same log read again from that position: the second line (same time) comes, once.
    const rest = linesAfter(lines, afterOne['pod/a']);
    expect(rest.map((line) => line.message)).toEqual([
      'second, same time',
      'third',
      'fourth with  spaces',
    ]);
    const afterTwo = advance(afterOne, rest.slice(0, 1));
    expect(afterTwo['pod/a']).toEqual({ time: '2026-01-02T03:04:05.000000001Z', seen: 2 });
    expect(linesAfter(lines, afterTwo['pod/a']).map((line) => line.message)).toEqual([
      'third',
      'fourth with  spaces',
    ]);
    const end = advance(afterTwo, linesAfter(lines, afterTwo['pod/a']));
    expect(linesAfter(lines, end['pod/a'])).toEqual([]);
  });

  it('round-trips tokens and takes a hostile or broken one for none', () => {
    const positions = { 'pod/a': { time: '2026-01-02T03:04:05Z', seen: 2 } };
    expect(decodeLogToken(encodeLogToken(positions))).toEqual(positions);
    expect(decodeLogToken(undefined)).toBeNull();
    expect(decodeLogToken('not base64 json')).toBeNull();
    expect(decodeLogToken(Buffer.from('[1,2]').toString('base64url'))).toBeNull();
    expect(decodeLogToken('x'.repeat(20_000))).toBeNull();
    // Entries that are not positions are dropped, the rest kept.
    const mixed = Buffer.from(
      JSON.stringify({
        good: { time: '2026-01-02T03:04:05Z', seen: 0 },
        badTime: { time: 'yesterday', seen: 1 },
        badSeen: { time: '2026-01-02T03:04:05Z', seen: -1 },
        nothing: null,
      }),
    ).toString('base64url');
    expect(decodeLogToken(mixed)).toEqual({ good: { time: '2026-01-02T03:04:05Z', seen: 0 } });
  });

  it('asks the API for enough whole seconds to cover the position', () => {
    const now = Date.parse('2026-01-02T03:04:10.200Z');
    expect(sinceSecondsOf('2026-01-02T03:04:05.000000001Z', now)).toBe(7);
    expect(sinceSecondsOf('2026-01-02T03:04:10.200Z', now)).toBe(1);
  });
});
