import { describe, expect, it } from 'vitest';
import { decodePackedDecimal, packedDecimalSize } from '../src/mysql/mysql-binlog-decimal.ts';

describe('packed DECIMAL', () => {
  it('sizes values as MySQL lays them out', () => {
    expect(packedDecimalSize(5, 2)).toBe(3);
    expect(packedDecimalSize(12, 2)).toBe(6);
    expect(packedDecimalSize(30, 10)).toBe(14);
    expect(packedDecimalSize(65, 30)).toBe(30);
  });

  it('decodes positive, negative and zero values with every digit', () => {
    expect(decodePackedDecimal(Uint8Array.from([0x80, 0x7b, 0x2d]), 5, 2)).toBe('123.45');
    expect(decodePackedDecimal(Uint8Array.from([0x7f, 0x84, 0xd2]), 5, 2)).toBe('-123.45');
    expect(decodePackedDecimal(Uint8Array.from([0x80, 0x00, 0x05]), 5, 2)).toBe('0.05');
    expect(decodePackedDecimal(Uint8Array.from([0x80, 0x00, 0x00]), 5, 2)).toBe('0.00');
    // DECIMAL(10,0) 1234567890: one leading digit (1 byte) and a group of nine (4 bytes).
    expect(decodePackedDecimal(Uint8Array.from([0x81, 0x0d, 0xfb, 0x38, 0xd2]), 10, 0)).toBe(
      '1234567890',
    );
  });
});
