import { describe, expect, it } from 'vitest';
import { ReplicationError } from '../src/errors.ts';
import { MsSqlLsn } from '../src/mssql/mssql-position.ts';
import type { ReplicationPosition } from '../src/replication.ts';

const lsn = (hex: string) => MsSqlLsn.parse(hex);

describe('MsSqlLsn', () => {
  it('serialises 10 bytes as 20 uppercase hex digits and reads them back', () => {
    const bytes = Buffer.from('0000002a000001c80003', 'hex');
    const position = MsSqlLsn.fromBytes(bytes);
    expect(position.backend).toBe('mssql');
    expect(position.serialize()).toBe('0000002A000001C80003');
    expect(MsSqlLsn.parse(position.serialize()).bytes).toEqual(bytes);
    expect(position.toString()).toBe('0000002A:000001C8:0003');
  });

  it('accepts 0x-prefixed hex, lower case and the VLF:block:slot notation', () => {
    const expected = '0000002A000001C80003';
    expect(lsn('0x0000002a000001c80003').serialize()).toBe(expected);
    expect(lsn('0000002a:000001c8:0003').serialize()).toBe(expected);
    expect(lsn(' 0000002A000001C80003 ').serialize()).toBe(expected);
  });

  it('rejects anything else with a replication error', () => {
    for (const text of ['', '0x12', '0000002A000001C8000', 'G000002A000001C80003', '2A:1C8:3']) {
      expect(() => lsn(text), text).toThrow(ReplicationError);
    }
    expect(() => MsSqlLsn.fromBytes(Buffer.alloc(8))).toThrow(ReplicationError);
  });

  it('compares in log order, byte by byte from the most significant', () => {
    const a = lsn('0000002A000001C80003');
    const b = lsn('0000002A000001C80004');
    const c = lsn('0000002B000000000000');
    expect(a.compare(b)).toBeLessThan(0);
    expect(b.compare(c)).toBeLessThan(0);
    expect(c.compare(a)).toBeGreaterThan(0);
    expect(a.compare(lsn('0x0000002a000001c80003'))).toBe(0);
  });

  it('serialises so that string order is log order', () => {
    const positions = ['000000FF000000000001', '00000100000000000000', '0000000A00000FFF0001'].map(
      lsn,
    );
    const byText = [...positions].sort((x, y) =>
      x.serialize() < y.serialize() ? -1 : x.serialize() > y.serialize() ? 1 : 0,
    );
    const byLog = [...positions].sort((x, y) => x.compare(y));
    expect(byText).toEqual(byLog);
  });

  it('tells the zero LSN the CDC functions return for "none"', () => {
    expect(lsn('00000000000000000000').isZero).toBe(true);
    expect(lsn('00000000000000000001').isZero).toBe(false);
  });

  it('refuses positions of other engines', () => {
    const postgres: ReplicationPosition = {
      backend: 'postgres',
      compare: () => 0,
      serialize: () => '0000000016B3748',
      toString: () => '0/16B3748',
    };
    expect(() => lsn('0000002A000001C80003').compare(postgres)).toThrow(ReplicationError);
    expect(() => MsSqlLsn.from(postgres)).toThrow(ReplicationError);
  });
});
