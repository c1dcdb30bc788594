import { describe, expect, it } from 'vitest';
import { mySqlGeometryText, wktNumber } from '../src/mysql/mysql-geometry.ts';

const hex = (text: string) => Buffer.from(text, 'hex');

describe('wktNumber', () => {
  it('prints coordinates as MariaDB’s ST_AsText does', () => {
    // Pairs observed on MariaDB 10.11.
    const cases: [number, string][] = [
      [0, '0'],
      [-0, '0'],
      [1, '1'],
      [100, '100'],
      [-1.5, '-1.5'],
      [0.1, '0.1'],
      [1e14, '100000000000000'],
      [-1e14, '-100000000000000'],
      [1.2345678901234e14, '123456789012340'],
      [123456789012345, '123456789012345'],
      [1e15, '1e15'],
      [-1e15, '-1e15'],
      [1.25e15, '1.25e15'],
      [1234567890123456, '1.234567890123456e15'],
      [1.2345678901234568e17, '1.2345678901234568e17'],
      [1e21, '1e21'],
      [1e300, '1e300'],
      [1.7976931348623157e308, '1.7976931348623157e308'],
      [123456.78901234567, '123456.78901234567'],
      [123456789.12345679, '123456789.12345679'],
      [1e-5, '0.00001'],
      [-1e-10, '-0.0000000001'],
      [1.2345678901234e-15, '0.0000000000000012345678901234'],
      [1e-15, '0.000000000000001'],
      [1e-16, '1e-16'],
      [-1.25e-20, '-1.25e-20'],
      [1e-300, '1e-300'],
      [5e-324, '5e-324'],
    ];
    for (const [value, text] of cases) expect(wktNumber(value), String(value)).toBe(text);
  });
});

describe('mySqlGeometryText', () => {
  it('reads the server’s SRID + WKB form into WKT', () => {
    // HEX(ST_GeomFromText(…)) on MariaDB, and its ST_AsText.
    const cases: [string, string][] = [
      ['0000000001010000000000000000000080000000000000F8BF', 'POINT(0 -1.5)'],
      ['000000000104000000010000000101000000000000000000F03F000000000000F03F', 'MULTIPOINT(1 1)'],
      [
        '0000000001050000000200000001020000000200000000000000000000000000000000000000000000000000F03F000000000000F03F0102000000020000000000000000000040000000000000004000000000000008400000000000000840',
        'MULTILINESTRING((0 0,1 1),(2 2,3 3))',
      ],
      [
        '000000000106000000020000000103000000010000000400000000000000000000000000000000000000000000000000F03F0000000000000000000000000000F03F000000000000F03F000000000000000000000000000000000103000000010000000400000000000000000014400000000000001440000000000000184000000000000014400000000000001840000000000000184000000000000014400000000000001440',
        'MULTIPOLYGON(((0 0,1 0,1 1,0 0)),((5 5,6 5,6 6,5 5)))',
      ],
      ['00000000010700000000000000', 'GEOMETRYCOLLECTION EMPTY'],
    ];
    for (const [bytes, text] of cases) expect(mySqlGeometryText(hex(bytes))).toBe(text);
  });

  it('reads big-endian WKB and nested collections', () => {
    const point = (x: string, y: string) => `0000000001${x}${y}`;
    const one = '3FF0000000000000';
    const two = '4000000000000000';
    expect(mySqlGeometryText(hex(`E6100000${point(one, two)}`))).toBe('POINT(1 2)');
    // A collection holding a point and a polygon whose ring is a triangle.
    const ring = `00000004${point(one, one).slice(10)}${one}${two}${two}${two}${one}${one}`;
    const polygon = `000000000300000001${ring}`;
    const bytes = `E6100000000000000700000002${point(two, one)}${polygon}`;
    expect(mySqlGeometryText(hex(bytes))).toBe(
      'GEOMETRYCOLLECTION(POINT(2 1),POLYGON((1 1,1 2,2 2,1 1)))',
    );
  });

  it('rejects an unknown geometry type and a truncated value', () => {
    expect(() => mySqlGeometryText(hex('000000000109000000'))).toThrow(
      'Unexpected geometry type 9 in a binlog spatial value.',
    );
    expect(() => mySqlGeometryText(hex('00000000010100000000'))).toThrow(
      'Unexpected end in a binlog spatial value.',
    );
  });
});
