import type { ColumnType, SourceColumn } from '@replix/engine';
import { describe, expect, it } from 'vitest';
import { postgresColumnType, postgresRowConverter } from '../src/postgres/postgres-types.ts';

describe('postgresColumnType', () => {
  const cases: [string, ColumnType][] = [
    ['smallint', 'int'],
    ['int2', 'int'],
    ['integer', 'int'],
    ['int4', 'int'],
    ['bigint', 'bigint'],
    ['int8', 'bigint'],
    ['real', 'float'],
    ['float4', 'float'],
    ['double precision', 'float'],
    ['float8', 'float'],
    ['numeric', 'decimal'],
    ['numeric(12,2)', 'decimal'],
    ['numeric(30,10)', 'decimal'],
    ['boolean', 'boolean'],
    ['bool', 'boolean'],
    ['bit(1)', 'boolean'],
    ['bit(8)', 'string'],
    ['bit varying(8)', 'string'],
    ['character(5)', 'string'],
    ['character varying(20)', 'string'],
    ['text', 'string'],
    ['uuid', 'string'],
    ['inet', 'string'],
    ['cidr', 'string'],
    ['macaddr', 'string'],
    ['interval', 'string'],
    ['interval year to month', 'string'],
    ['citext', 'string'],
    ['money', 'string'],
    ['tsvector', 'string'],
    ['integer[]', 'array'],
    ['timestamp(3) without time zone[]', 'array'],
    ['"public".mood', 'string'],
    ['json', 'json'],
    ['jsonb', 'json'],
    ['date', 'date'],
    ['timestamp without time zone', 'timestamp'],
    ['timestamp(3) without time zone', 'timestamp'],
    ['timestamp with time zone', 'timestamp'],
    ['timestamp(6) with time zone', 'timestamp'],
    ['timestamptz', 'timestamp'],
    ['time without time zone', 'time'],
    ['time(3) without time zone', 'time'],
    ['time with time zone', 'time'],
    ['timetz', 'time'],
    ['bytea', 'binary'],
  ];
  it.each(cases)('%s is %s', (sourceType, type) => {
    expect(postgresColumnType(sourceType)).toBe(type);
  });
});

describe('PostgreSQL value conversion', () => {
  const col = (type: ColumnType, sourceType: string): SourceColumn => ({
    name: 'c',
    type,
    nullable: true,
    sourceType,
  });

  it('turns the text of every type into its canonical form', () => {
    const columns = [
      col('int', 'integer'),
      col('bigint', 'bigint'),
      col('float', 'double precision'),
      col('float', 'real'),
      col('decimal', 'numeric(30,10)'),
      col('decimal', 'numeric'),
      col('boolean', 'boolean'),
      col('boolean', 'bit(1)'),
      col('string', 'interval'),
      col('json', 'jsonb'),
      col('date', 'date'),
      col('date', 'date'),
      col('timestamp', 'timestamp(3) without time zone'),
      col('timestamp', 'timestamp with time zone'),
      col('timestamp', 'timestamp with time zone'),
      col('time', 'time without time zone'),
      col('time', 'time with time zone'),
      col('binary', 'bytea'),
      col('string', 'integer[]'),
    ];
    const row: unknown[] = [
      '-2147483648',
      '9223372036854775807',
      '0.30000000000000004',
      'NaN',
      '12345678901234567890.1234567891',
      'NaN',
      'f',
      '1',
      'P1Y2M3DT4H5M6S',
      '{"a": 1}',
      '2024-02-29',
      'infinity',
      '2024-02-29 23:59:59.999',
      '2024-02-29 23:59:59.123456+00',
      '-infinity',
      '24:00:00',
      '01:30:00+02',
      '\\xdeadbeef',
      '{1,2,NULL}',
    ];
    postgresRowConverter(columns)(row);
    expect(row).toEqual([
      -2147483648,
      '9223372036854775807',
      0.30000000000000004,
      Number.NaN,
      '12345678901234567890.1234567891',
      null,
      false,
      true,
      'P1Y2M3DT4H5M6S',
      '{"a": 1}',
      '2024-02-29',
      null,
      Date.UTC(2024, 1, 29, 23, 59, 59, 999) * 1000,
      Date.UTC(2024, 1, 29, 23, 59, 59, 123) * 1000 + 456,
      null,
      86_400,
      84_600,
      Buffer.from([0xde, 0xad, 0xbe, 0xef]),
      '{1,2,NULL}',
    ]);
  });
});
