import { describe, expect, it } from 'vitest';
import { ReplicationError } from '../src/errors.ts';
import { BinlogPosition } from '../src/mysql/mysql-position.ts';
import { Lsn } from '../src/postgres/postgres-position.ts';

describe('BinlogPosition', () => {
  it('prints the server notation and serialises to a sortable form', () => {
    const position = new BinlogPosition('mysql-bin.000003', 1234);
    expect(position.toString()).toBe('mysql-bin.000003:1234');
    expect(position.serialize()).toBe('mysql:mysql-bin:0000000003:00000000000000001234');
    expect(position).toMatchObject({ backend: 'mysql', base: 'mysql-bin', sequence: 3 });
  });

  it('reads back its serialised form and the server notation', () => {
    for (const [file, offset] of [
      ['binlog.000001', 4],
      ['mysql-bin.1000000', 9_007_199_254_740_991],
      ['a:b.c.000042', 120],
    ] as const) {
      const position = new BinlogPosition(file, offset);
      for (const text of [position.serialize(), position.toString()]) {
        const parsed = BinlogPosition.parse(text);
        expect([parsed.file, parsed.offset]).toEqual([file, offset]);
        expect(parsed.compare(position)).toBe(0);
      }
    }
  });

  it('compares by file sequence, then offset; serialised forms sort the same way', () => {
    const positions = [
      new BinlogPosition('binlog.1000000', 4),
      new BinlogPosition('binlog.000010', 4),
      new BinlogPosition('binlog.999999', 5),
      new BinlogPosition('binlog.000002', 99_999),
      new BinlogPosition('binlog.000002', 100_000),
      new BinlogPosition('binlog.000001', 4),
    ];
    const expected = [5, 3, 4, 1, 2, 0].map((index) => positions[index]!.toString());
    expect([...positions].sort((a, b) => a.compare(b)).map(String)).toEqual(expected);
    expect(
      positions
        .map((position) => position.serialize())
        .sort()
        .map((text) => BinlogPosition.parse(text).toString()),
    ).toEqual(expected);
    expect(positions[3]!.compare(positions[4]!)).toBeLessThan(0);
    expect(positions[0]!.compare(positions[1]!)).toBeGreaterThan(0);
  });

  it('rejects malformed text with a replication error that quotes it', () => {
    for (const text of [
      '',
      'binlog.000001',
      'binlog:12',
      'binlog.1:12',
      'binlog.0000001:12',
      'binlog.000001:-1',
      'binlog.000001:1e3',
      'mysql:binlog:3:4',
      'mysql:binlog:0000000003:0000000000000000000x',
      'mysql:binlog:0000000003:99999999999999999999',
      'postgres:0000000016B3748',
      '0/16B3748',
    ]) {
      expect(() => BinlogPosition.parse(text), text).toThrow(ReplicationError);
    }
    expect(() => BinlogPosition.parse('nope')).toThrow('Not a MySQL binlog position: "nope".');
  });

  it('rejects file names the server would not write, and offsets that are not whole', () => {
    expect(() => new BinlogPosition('binlog.3', 4)).toThrow(RangeError);
    expect(() => new BinlogPosition('dir/binlog.000003', 4)).toThrow(RangeError);
    expect(() => new BinlogPosition('binlog.000003', 1.5)).toThrow(RangeError);
  });

  it('refuses to compare with another backend’s position', () => {
    expect(() => new BinlogPosition('binlog.000001', 4).compare(new Lsn(1n))).toThrow(
      'A MySQL position cannot be compared with a postgres one.',
    );
  });
});
