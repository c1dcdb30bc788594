import { describe, expect, it } from 'vitest';
import { ReplicationError } from '../src/errors.ts';
import { Lsn, NO_LSN } from '../src/postgres/postgres-position.ts';
import type { ReplicationPosition } from '../src/replication.ts';

describe('Lsn', () => {
  it('reads and writes PostgreSQL notation', () => {
    expect(Lsn.parse('0/16B3748').value).toBe(0x16b3748n);
    expect(Lsn.parse('16/b374d848').toString()).toBe('16/B374D848');
    expect(Lsn.parse('FFFFFFFF/FFFFFFFF').value).toBe((1n << 64n) - 1n);
    expect(NO_LSN.toString()).toBe('0/0');
  });

  it('serialises as postgres: and 16 hex digits, and reads that back', () => {
    const lsn = Lsn.parse('0/16B3748');
    expect(lsn.serialize()).toBe('postgres:00000000016B3748');
    expect(Lsn.parse(lsn.serialize()).compare(lsn)).toBe(0);
    expect(JSON.stringify({ at: lsn })).toBe('{"at":"postgres:00000000016B3748"}');
  });

  it('compares as 64-bit numbers, and its serialised forms sort the same way', () => {
    const texts = ['1/0', '0/FFFFFFFF', '0/10', '0/9', 'A/0', '0/0', 'FFFFFFFF/1'];
    const positions = texts.map((text) => Lsn.parse(text));
    const byCompare = [...positions].sort((a, b) => a.compare(b)).map(String);
    expect(byCompare).toEqual(['0/0', '0/9', '0/10', '0/FFFFFFFF', '1/0', 'A/0', 'FFFFFFFF/1']);
    const byString = positions.map((lsn) => lsn.serialize()).sort();
    expect(byString.map((text) => Lsn.parse(text).toString())).toEqual(byCompare);
    expect(Lsn.parse('0/10').compare(Lsn.parse('0/9'))).toBe(1);
    expect(Lsn.parse('0/9').compare(Lsn.parse('0/10'))).toBe(-1);
    expect(Lsn.parse('0/9').max(Lsn.parse('0/10')).toString()).toBe('0/10');
  });

  it('reads the 8-byte form of the replication protocol', () => {
    const buffer = Buffer.from([0xff, 0, 0, 0, 0x16, 0, 0, 0, 0x2a]);
    expect(Lsn.read(buffer, 1).toString()).toBe('16/2A');
  });

  it('refuses text that is no position', () => {
    for (const text of [
      '',
      '0/',
      '/1',
      '0/1/2',
      'postgres:16B3748',
      'postgres:00000000016b3748',
      'mysql-bin.000001:4',
      '123456789/0',
    ]) {
      expect(() => Lsn.parse(text), text).toThrow(ReplicationError);
    }
    expect(() => Lsn.parse('x/1')).toThrow('Not a PostgreSQL replication position: "x/1".');
  });

  it('refuses to compare with another backend position', () => {
    const other: ReplicationPosition = {
      backend: 'mysql',
      compare: () => 0,
      serialize: () => 'mysql:1',
      toString: () => 'mysql-bin.000001:4',
    };
    expect(() => Lsn.parse('0/1').compare(other)).toThrow(TypeError);
  });
});
