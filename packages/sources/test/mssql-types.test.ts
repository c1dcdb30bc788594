import type { ColumnType, SourceColumn } from '@replix/engine';
import { describe, expect, it } from 'vitest';
import {
  isMsSqlLargeObjectType,
  msSqlColumnType,
  msSqlDate,
  msSqlRowConverter,
  msSqlSourceType,
  msSqlTimeSeconds,
  msSqlTimestamp,
} from '../src/mssql/mssql-types.ts';

describe('msSqlColumnType', () => {
  const cases: [string, ColumnType][] = [
    ['tinyint', 'int'],
    ['smallint', 'int'],
    ['int', 'int'],
    ['bigint', 'bigint'],
    ['real', 'float'],
    ['float', 'float'],
    ['decimal(12,2)', 'decimal'],
    ['numeric(38,10)', 'decimal'],
    ['money', 'decimal'],
    ['smallmoney', 'decimal'],
    ['bit', 'boolean'],
    ['char(3)', 'string'],
    ['varchar(40)', 'string'],
    ['varchar(max)', 'string'],
    ['nchar(2)', 'string'],
    ['nvarchar(40)', 'string'],
    ['nvarchar(max)', 'string'],
    ['text', 'string'],
    ['ntext', 'string'],
    ['uniqueidentifier', 'string'],
    ['xml', 'string'],
    ['sql_variant', 'string'],
    ['hierarchyid', 'string'],
    ['geometry', 'string'],
    ['geography', 'string'],
    ['sysname', 'string'],
    ['json', 'json'],
    ['date', 'date'],
    ['datetime', 'timestamp'],
    ['datetime2(3)', 'timestamp'],
    ['datetime2(7)', 'timestamp'],
    ['smalldatetime', 'timestamp'],
    ['datetimeoffset(7)', 'timestamp'],
    ['time(0)', 'time'],
    ['time(7)', 'time'],
    ['binary(16)', 'binary'],
    ['varbinary(100)', 'binary'],
    ['varbinary(max)', 'binary'],
    ['image', 'binary'],
    ['rowversion', 'binary'],
    // sys.types still calls rowversion `timestamp`: a counter, not a point in time.
    ['timestamp', 'binary'],
    ['some_clr_type', 'string'],
  ];
  it.each(cases)('%s is %s', (sourceType, type) => {
    expect(msSqlColumnType(sourceType)).toBe(type);
  });

  it('ignores case and spaces', () => {
    expect(msSqlColumnType(' DateTime2 (3) ')).toBe('timestamp');
  });
});

describe('msSqlSourceType', () => {
  const facts = (typeName: string, maxLength: number, precision = 0, scale = 0) => ({
    typeName,
    maxLength,
    precision,
    scale,
  });

  it('prints lengths in characters: two bytes per nchar / nvarchar character', () => {
    expect(msSqlSourceType(facts('nvarchar', 80))).toBe('nvarchar(40)');
    expect(msSqlSourceType(facts('nchar', 4))).toBe('nchar(2)');
    expect(msSqlSourceType(facts('varchar', 40))).toBe('varchar(40)');
    expect(msSqlSourceType(facts('varbinary', 16))).toBe('varbinary(16)');
  });

  it('prints max lengths as max', () => {
    expect(msSqlSourceType(facts('nvarchar', -1))).toBe('nvarchar(max)');
    expect(msSqlSourceType(facts('varbinary', -1))).toBe('varbinary(max)');
  });

  it('prints precision and scale, and fractional seconds', () => {
    expect(msSqlSourceType(facts('decimal', 9, 12, 2))).toBe('decimal(12,2)');
    expect(msSqlSourceType(facts('numeric', 17, 38, 0))).toBe('numeric(38,0)');
    expect(msSqlSourceType(facts('datetime2', 7, 23, 3))).toBe('datetime2(3)');
    expect(msSqlSourceType(facts('datetimeoffset', 10, 34, 7))).toBe('datetimeoffset(7)');
    expect(msSqlSourceType(facts('time', 5, 16, 7))).toBe('time(7)');
  });

  it('prints other types by name alone', () => {
    expect(msSqlSourceType(facts('int', 4, 10, 0))).toBe('int');
    expect(msSqlSourceType(facts('money', 8, 19, 4))).toBe('money');
    expect(msSqlSourceType(facts('datetime', 8, 23, 3))).toBe('datetime');
    expect(msSqlSourceType(facts('float', 8, 53, 0))).toBe('float');
    expect(msSqlSourceType(facts('hierarchyid', 892))).toBe('hierarchyid');
  });
});

describe('isMsSqlLargeObjectType', () => {
  it('knows the types CDC may leave out of a before-image', () => {
    for (const type of ['text', 'ntext', 'image', 'xml', 'varchar(max)', 'nvarchar(max)']) {
      expect(isMsSqlLargeObjectType(type), type).toBe(true);
    }
    for (const type of ['varchar(8000)', 'nvarchar(40)', 'int', 'varbinary(16)']) {
      expect(isMsSqlLargeObjectType(type), type).toBe(false);
    }
  });
});

describe('SQL Server value conversion', () => {
  const col = (type: ColumnType, sourceType: string): SourceColumn => ({
    name: 'c',
    type,
    nullable: true,
    sourceType,
  });
  const convert = (column: SourceColumn, value: unknown): unknown => {
    const row = [value];
    msSqlRowConverter([column])(row);
    return row[0];
  };

  it('keeps the exact decimal text the query casts DECIMAL and MONEY to', () => {
    const digits = '12345678901234567890.1234567890';
    expect(convert(col('decimal', 'decimal(30,10)'), digits)).toBe(digits);
    expect(
      convert(col('decimal', 'decimal(38,0)'), '-99999999999999999999999999999999999999'),
    ).toBe('-99999999999999999999999999999999999999');
    expect(convert(col('decimal', 'money'), '922337203685477.5807')).toBe('922337203685477.5807');
  });

  it('keeps BIGINT strings, numbers, booleans and Buffers as tedious delivers them', () => {
    expect(convert(col('bigint', 'bigint'), '-9223372036854775808')).toBe('-9223372036854775808');
    expect(convert(col('int', 'int'), -7)).toBe(-7);
    expect(convert(col('float', 'float'), 1.5)).toBe(1.5);
    expect(convert(col('boolean', 'bit'), true)).toBe(true);
    const bytes = Buffer.from([0, 1, 254, 255]);
    expect(convert(col('binary', 'varbinary(4)'), bytes)).toBe(bytes);
    expect(convert(col('binary', 'rowversion'), bytes)).toBeInstanceOf(Uint8Array);
  });

  it('formats dates from their UTC fields, years padded to four digits', () => {
    expect(msSqlDate(new Date(Date.UTC(2024, 1, 29)))).toBe('2024-02-29');
    const first = new Date(Date.UTC(2000, 0, 1));
    first.setUTCFullYear(1, 0, 1);
    expect(msSqlDate(first)).toBe('0001-01-01');
    expect(msSqlDate(new Date(Date.UTC(9999, 11, 31)))).toBe('9999-12-31');
  });

  it('gives timestamps as epoch microseconds, the seventh digit of 100 ns ticks cut', () => {
    expect(msSqlTimestamp(new Date(Date.UTC(2024, 2, 10, 10, 30, 0, 123)))).toBe(
      Date.UTC(2024, 2, 10, 10, 30, 0, 123) * 1000,
    );
    expect(msSqlTimestamp(new Date(Date.UTC(1900, 0, 1)))).toBe(-2208988800000 * 1000);
    const precise = Object.assign(new Date(Date.UTC(2024, 2, 10, 10, 30, 0, 123)), {
      nanosecondsDelta: 0.0004567,
    });
    expect(msSqlTimestamp(precise)).toBe(Date.UTC(2024, 2, 10, 10, 30, 0, 123) * 1000 + 456);
    const early = Object.assign(new Date(Date.UTC(1969, 11, 31, 23, 59, 59, 999)), {
      nanosecondsDelta: 0.0009999,
    });
    expect(msSqlTimestamp(early)).toBe(-1);
  });

  it('gives times as seconds with microseconds, the ticks tedious keeps beside the milliseconds cut to µs', () => {
    const time = Object.assign(new Date(Date.UTC(1970, 0, 1, 12, 34, 56, 123)), {
      nanosecondsDelta: 0.0004567,
    });
    expect(msSqlTimeSeconds(time)).toBe(45296.123456);
    const last = Object.assign(new Date(Date.UTC(1970, 0, 1, 23, 59, 59, 999)), {
      nanosecondsDelta: 0.0009999,
    });
    expect(msSqlTimeSeconds(last)).toBe(86_399.999999);
    expect(msSqlTimeSeconds(new Date(Date.UTC(1970, 0, 1, 23, 59, 59)))).toBe(86399);
    expect(msSqlTimeSeconds(new Date(0))).toBe(0);
  });

  it('reads CLR bytes as hex text rather than failing, and leaves NULL alone', () => {
    expect(convert(col('string', 'some_clr_type'), Buffer.from([1, 171]))).toBe('0x01ab');
    expect(convert(col('string', 'nvarchar(10)'), 'ñandú')).toBe('ñandú');
    expect(convert(col('date', 'date'), null)).toBeNull();
  });

  it('rejects values of the wrong kind with source_value_invalid', () => {
    expect(() => convert(col('timestamp', 'datetime2(3)'), '2024-01-01')).toThrowError(
      expect.objectContaining({ code: 'source_value_invalid' }),
    );
  });
});
