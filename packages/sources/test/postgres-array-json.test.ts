import type { ElementType, SourceColumn } from '@replix/engine';
import { describe, expect, it } from 'vitest';
import { postgresArrayConverter } from '../src/postgres/postgres-array-json.ts';
import {
  postgresColumnType,
  postgresElementType,
  postgresRowConverter,
} from '../src/postgres/postgres-types.ts';

function arrayColumn(sourceType: string, elementType: ElementType): SourceColumn {
  return { name: 'a', type: 'array', nullable: true, sourceType, elementType };
}

const json = (sourceType: string, text: string) =>
  postgresArrayConverter(arrayColumn(sourceType, postgresElementType(sourceType)))(text);

describe('PostgreSQL array types', () => {
  it('are arrays whose element type follows the element', () => {
    expect(postgresColumnType('text[]')).toBe('array');
    expect(postgresColumnType('integer[]')).toBe('array');
    const cases: [string, ElementType][] = [
      ['integer[]', 'int'],
      ['bigint[]', 'bigint'],
      ['numeric(5,2)[]', 'decimal'],
      ['double precision[]', 'float'],
      ['boolean[]', 'boolean'],
      ['text[]', 'string'],
      ['character(3)[]', 'string'],
      ['jsonb[]', 'json'],
      ['date[]', 'date'],
      ['timestamp with time zone[]', 'timestamp'],
      ['time without time zone[]', 'time'],
      ['bytea[]', 'binary'],
      ['uuid[]', 'string'],
    ];
    for (const [sourceType, element] of cases) {
      expect(postgresElementType(sourceType), sourceType).toBe(element);
    }
  });
});

describe('PostgreSQL array values as JSON', () => {
  it('writes numbers with every digit, non-finite ones as null', () => {
    expect(json('integer[]', '{1,-2,NULL}')).toBe('[1,-2,null]');
    expect(json('bigint[]', '{9223372036854775807,-9223372036854775808}')).toBe(
      '[9223372036854775807,-9223372036854775808]',
    );
    expect(json('numeric[]', '{12.50,-0.000001,NaN,123456789012345678901234.5}')).toBe(
      '[12.50,-0.000001,null,123456789012345678901234.5]',
    );
    expect(json('double precision[]', '{1.5,1e+100,NaN,Infinity,-Infinity}')).toBe(
      '[1.5,1e+100,null,null,null]',
    );
  });

  it('writes strings, booleans and JSON text as the type table says', () => {
    expect(json('text[]', '{Trailers,"Behind \\"the\\" Scenes",NULL,"NULL"}')).toBe(
      '["Trailers","Behind \\"the\\" Scenes",null,"NULL"]',
    );
    expect(json('character(4)[]', '{"ab  ","    ",NULL}')).toBe('["ab","",null]');
    expect(json('boolean[]', '{t,f,NULL}')).toBe('[true,false,null]');
    expect(json('jsonb[]', '{"{\\"a\\": 1}",null}')).toBe('["{\\"a\\": 1}",null]');
    expect(json('mpaa_rating[]', '{PG-13,NC-17}')).toBe('["PG-13","NC-17"]');
  });

  it('writes dates, timestamps, times and bytes in the scalar forms', () => {
    expect(json('date[]', '{2024-02-29,infinity,NULL}')).toBe('["2024-02-29",null,null]');
    expect(
      json(
        'timestamp with time zone[]',
        '{"2022-09-10 16:46:03.905795+00","2022-01-01 00:00:00+00","1999-12-31 23:00:00-01:30",infinity}',
      ),
    ).toBe(
      '["2022-09-10T16:46:03.905795Z","2022-01-01T00:00:00.000000Z","2000-01-01T00:30:00.000000Z",null]',
    );
    expect(json('timestamp(3) without time zone[]', '{"2024-05-01 12:00:00.5"}')).toBe(
      '["2024-05-01T12:00:00.500Z"]',
    );
    expect(json('timestamp without time zone[]', '{"0044-03-15 12:00:00 BC"}')).toBe(
      '["-000043-03-15T12:00:00.000000Z"]',
    );
    expect(json('time without time zone[]', '{01:01:01.5,23:59:59.999999}')).toBe(
      '[3661.5,86399.999999]',
    );
    expect(json('bytea[]', '{"\\\\x00abff","\\\\x"}')).toBe('["00abff",""]');
  });

  it('nests multidimensional arrays and keeps empty ones', () => {
    expect(json('integer[]', '{{1,2},{3,NULL}}')).toBe('[[1,2],[3,null]]');
    expect(json('integer[]', '[0:1]={7,8}')).toBe('[7,8]');
    expect(json('text[]', '{}')).toBe('[]');
    expect(json('box[]', '{(1,1),(0,0);(3,3),(2,2)}')).toBe('["(1,1),(0,0)","(3,3),(2,2)"]');
  });

  it('is what the row converter does for array columns', () => {
    const row: unknown[] = ['{1,NULL}', null];
    postgresRowConverter([arrayColumn('integer[]', 'int'), arrayColumn('text[]', 'string')])(row);
    expect(row).toEqual(['[1,null]', null]);
  });
});

describe('PostgreSQL character(n)', () => {
  it('is served without its trailing blanks; varchar and text keep theirs', () => {
    const col = (sourceType: string): SourceColumn => ({
      name: 'c',
      type: 'string',
      nullable: true,
      sourceType,
    });
    const row: unknown[] = ['English             ', 'a  ', ' b  ', 'x ', 'y ', '  '];
    postgresRowConverter([
      col('character(20)'),
      col('bpchar'),
      col('character(4)'),
      col('character varying(5)'),
      col('text'),
      col('character(2)'),
    ])(row);
    expect(row).toEqual(['English', 'a', ' b', 'x ', 'y ', '']);
  });
});
