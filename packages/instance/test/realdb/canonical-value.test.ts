import { describe, expect, it } from 'vitest';
import {
  canonicalServed,
  canonicalSource,
  canonicalTimestamp,
  parseJsonKeepingDigits,
} from './canonical-value.ts';

describe('canonical values of the real-database comparisons', () => {
  it('pads a timestamp to microseconds and never cuts it', () => {
    expect(canonicalTimestamp('2006-02-15T04:34:33Z')).toBe('2006-02-15T04:34:33.000000Z');
    expect(canonicalTimestamp('2006-02-15T04:34:33.000Z')).toBe('2006-02-15T04:34:33.000000Z');
    expect(canonicalTimestamp('2022-09-10T16:46:03.905Z')).not.toBe(
      canonicalTimestamp('2022-09-10T16:46:03.905795Z'),
    );
    expect(canonicalTimestamp('2022-09-10T16:46:03.9057951Z')).toBe('2022-09-10T16:46:03.9057951Z');
  });

  it('keeps every digit of a served number, and its scale', () => {
    const parsed = parseJsonKeepingDigits('{"a":12.50,"b":18446744073709551615,"c":[1,true,null]}');
    expect(canonicalServed(parsed, new Set())).toEqual({
      a: '12.50',
      b: '18446744073709551615',
      c: ['1', 'true', null],
    });
  });

  it('reads served timestamps as instants only under the given keys', () => {
    const parsed = parseJsonKeepingDigits(
      '{"at":"2024-01-02T03:04:05.678Z","note":"2024-01-02T03:04:05Z"}',
    );
    expect(canonicalServed(parsed, new Set(['at']))).toEqual({
      at: '2024-01-02T03:04:05.678000Z',
      note: '2024-01-02T03:04:05Z',
    });
  });

  it('turns driver values into the same forms', () => {
    expect(
      canonicalSource({ n: 5, b: 7n, t: true, x: Buffer.from([0x0a, 0xff]), s: 'x', z: null }),
    ).toEqual({
      n: '5',
      b: '7',
      t: 'true',
      x: '0aff',
      s: 'x',
      z: null,
    });
  });
});
