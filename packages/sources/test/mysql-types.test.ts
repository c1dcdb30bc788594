import type { ColumnType, SourceColumn } from '@replix/engine';
import { describe, expect, it } from 'vitest';
import {
  mySqlBitsToDecimal,
  mySqlBoolean,
  mySqlColumnType,
  mySqlRowConverter,
} from '../src/mysql/mysql-types.ts';

describe('mySqlColumnType', () => {
  const cases: [string, ColumnType][] = [
    ['tinyint(4)', 'int'],
    ['tinyint', 'int'],
    ['tinyint(3) unsigned', 'int'],
    ['smallint(6)', 'int'],
    ['smallint(5) unsigned', 'int'],
    ['mediumint(9)', 'int'],
    ['int(11)', 'int'],
    ['int', 'int'],
    ['int(10) unsigned', 'int'],
    ['int unsigned zerofill', 'int'],
    ['year(4)', 'int'],
    ['year', 'int'],
    ['bigint(20)', 'bigint'],
    ['bigint(20) unsigned', 'bigint'],
    ['bigint unsigned', 'bigint'],
    ['float', 'float'],
    ['float(7,3)', 'float'],
    ['double', 'float'],
    ['double precision', 'float'],
    ['real', 'float'],
    ['decimal(12,2)', 'decimal'],
    ['decimal(30,10) unsigned', 'decimal'],
    ['numeric(5,0)', 'decimal'],
    ['tinyint(1)', 'boolean'],
    ['TINYINT(1)', 'boolean'],
    ['boolean', 'boolean'],
    ['bool', 'boolean'],
    ['bit(1)', 'boolean'],
    ['bit', 'boolean'],
    ['bit(8)', 'bigint'],
    ['bit(64)', 'bigint'],
    ['char(3)', 'string'],
    ['varchar(20)', 'string'],
    ['tinytext', 'string'],
    ['text', 'string'],
    ['mediumtext', 'string'],
    ['longtext', 'string'],
    ["enum('a','b(c)')", 'string'],
    ["set('x','y')", 'string'],
    ['uuid', 'string'],
    ['inet6', 'string'],
    ['geometry', 'string'],
    ['something_new(3)', 'string'],
    ['json', 'json'],
    ['date', 'date'],
    ['datetime', 'timestamp'],
    ['datetime(3)', 'timestamp'],
    ['timestamp(6)', 'timestamp'],
    ['time', 'time'],
    ['time(6)', 'time'],
    ['binary(16)', 'binary'],
    ['varbinary(255)', 'binary'],
    ['tinyblob', 'binary'],
    ['blob', 'binary'],
    ['mediumblob', 'binary'],
    ['longblob', 'binary'],
  ];
  it.each(cases)('%s is %s', (sourceType, type) => {
    expect(mySqlColumnType(sourceType)).toBe(type);
  });
});

describe('MySQL value conversion', () => {
  const col = (type: ColumnType, sourceType: string): SourceColumn => ({
    name: 'c',
    type,
    nullable: true,
    sourceType,
  });

  it('turns BIT(1) buffers and TINYINT(1) numbers into booleans', () => {
    expect(mySqlBoolean(Buffer.from([1]))).toBe(true);
    expect(mySqlBoolean(Buffer.from([0]))).toBe(false);
    expect(mySqlBoolean(1)).toBe(true);
    expect(mySqlBoolean(0)).toBe(false);
    expect(mySqlBoolean(-1)).toBe(true);
  });

  it('turns BIT(n) buffers into the decimal string of their value', () => {
    expect(mySqlBitsToDecimal(Buffer.from([0x01, 0x02]))).toBe('258');
    expect(mySqlBitsToDecimal(Buffer.alloc(8, 0xff))).toBe('18446744073709551615');
    expect(mySqlBitsToDecimal(Buffer.from([0]))).toBe('0');
  });

  it('converts a whole row once per column, leaving NULLs and canonical values alone', () => {
    const columns = [
      col('int', 'int(11)'),
      col('bigint', 'bigint(20) unsigned'),
      col('decimal', 'decimal(30,10)'),
      col('boolean', 'tinyint(1)'),
      col('boolean', 'bit(1)'),
      col('bigint', 'bit(16)'),
      col('date', 'date'),
      col('timestamp', 'datetime(3)'),
      col('timestamp', 'timestamp(6)'),
      col('time', 'time'),
      col('binary', 'blob'),
      col('string', 'varchar(10)'),
      col('json', 'json'),
      col('date', 'date'),
      col('timestamp', 'datetime'),
    ];
    const blob = Buffer.from([1, 2, 3]);
    const row: unknown[] = [
      42,
      '18446744073709551615',
      '12345678901234567890.1234567891',
      1,
      Buffer.from([0]),
      Buffer.from([1, 0]),
      '2024-02-29',
      '2024-02-29 23:59:59.999',
      '1969-12-31 23:59:59.999999',
      '-838:59:59.000000',
      blob,
      Buffer.from('héllo'),
      '{"a": [1, 2]}',
      '0000-00-00',
      '0000-00-00 00:00:00',
    ];
    mySqlRowConverter(columns)(row);
    expect(row).toEqual([
      42,
      '18446744073709551615',
      '12345678901234567890.1234567891',
      true,
      false,
      '256',
      '2024-02-29',
      Date.UTC(2024, 1, 29, 23, 59, 59, 999) * 1000,
      -1,
      -3_020_399,
      blob,
      'héllo',
      '{"a": [1, 2]}',
      null,
      null,
    ]);
    const nulls: unknown[] = columns.map(() => null);
    mySqlRowConverter(columns)(nulls);
    expect(nulls).toEqual(columns.map(() => null));
  });
});
