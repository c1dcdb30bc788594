import type { ColumnType, SourceColumn } from '@replix/engine';
import mssql from 'mssql';
import { beforeAll, describe, expect, it } from 'vitest';
import { loadMssql } from '../src/mssql/mssql-driver.ts';
import {
  msSqlKeyGroups,
  msSqlRowsWhereClause,
  msSqlValueParameter,
} from '../src/mssql/mssql-read-rows.ts';
import { KEYS_PER_QUERY } from '../src/rows-request.ts';

const col = (name: string, type: ColumnType, sourceType: string): SourceColumn => ({
  name,
  type,
  nullable: false,
  sourceType,
});

const columns = [
  col('region', 'string', 'char(2)'),
  col('id', 'int', 'int'),
  col('updated', 'timestamp', 'datetime2(3)'),
];

// The driver is loaded as a pool opens; these tests make parameters without one.
beforeAll(() => loadMssql());

/** The factory behind a parameter's type: `mssql.DateTime2(7)` → `mssql.DateTime2`. */
function factoryOf(type: unknown): unknown {
  return typeof type === 'function' ? type : (type as { type: unknown }).type;
}

describe('msSqlRowsWhereClause', () => {
  it('uses IN for a one-column key, values as parameters', () => {
    const { clause, parameters } = msSqlRowsWhereClause(
      { table: 't', columns, keyColumns: ['id'], keys: null },
      [[1], [2]],
    );
    expect(clause).toBe(' WHERE [id] IN (@p1, @p2)');
    expect(parameters.map((p) => [p.name, p.value])).toEqual([
      ['p1', 1],
      ['p2', 2],
    ]);
  });

  it('spells a composite key as an OR of ANDs, after the where and before the change column', () => {
    const { clause, parameters } = msSqlRowsWhereClause(
      {
        table: 't',
        columns,
        keyColumns: ['region', 'id'],
        keys: null,
        where: 'active = 1',
        after: { column: 'updated', value: Date.UTC(2024, 0, 1) * 1000 },
      },
      [
        ['eu', 1],
        ["x'); DROP TABLE t; --", 2],
      ],
    );
    expect(clause).toBe(
      ' WHERE (active = 1\n) AND (([region] = @p1 AND [id] = @p2) OR ([region] = @p3 AND [id] = @p4))' +
        ' AND [updated] > @p5',
    );
    expect(parameters.map((p) => p.value)).toEqual([
      'eu',
      1,
      "x'); DROP TABLE t; --",
      2,
      new Date(Date.UTC(2024, 0, 1)),
    ]);
  });

  it('has no WHERE for every row', () => {
    expect(msSqlRowsWhereClause({ table: 't', columns, keyColumns: [], keys: null }, null)).toEqual(
      { clause: '', parameters: [] },
    );
  });
});

describe('msSqlValueParameter', () => {
  const typeOf = (column: SourceColumn, value: unknown) =>
    factoryOf(msSqlValueParameter('p', column, value).type);

  it('turns timestamps back into dates of the column type', () => {
    const at = Date.UTC(2024, 1, 29, 23, 59, 59, 997) * 1000;
    expect(msSqlValueParameter('p', col('c', 'timestamp', 'datetime'), at)).toMatchObject({
      value: new Date(at / 1000),
    });
    // Microseconds past the millisecond ride in tedious's nanosecondDelta.
    const precise = msSqlValueParameter('p', col('c', 'timestamp', 'datetime2(6)'), -1).value;
    expect((precise as Date).getTime()).toBe(-1);
    expect((precise as { nanosecondDelta: number }).nanosecondDelta).toBe(0.000999);
    expect(typeOf(col('c', 'timestamp', 'datetime'), at)).toBe(mssql.DateTime);
    expect(typeOf(col('c', 'timestamp', 'smalldatetime'), at)).toBe(mssql.SmallDateTime);
    expect(typeOf(col('c', 'timestamp', 'datetime2(3)'), at)).toBe(mssql.DateTime2);
    expect(typeOf(col('c', 'timestamp', 'datetimeoffset(7)'), at)).toBe(mssql.DateTimeOffset);
  });

  it('passes times, dates, bigints and decimals as text SQL Server converts exactly', () => {
    expect(msSqlValueParameter('p', col('c', 'time', 'time(7)'), 45296.123456).value).toBe(
      '12:34:56.123456',
    );
    expect(msSqlValueParameter('p', col('c', 'time', 'time(6)'), 86_399.999999).value).toBe(
      '23:59:59.999999',
    );
    expect(msSqlValueParameter('p', col('c', 'time', 'time(0)'), 0).value).toBe('00:00:00.000000');
    expect(msSqlValueParameter('p', col('c', 'date', 'date'), '2024-02-29').value).toBe(
      '2024-02-29',
    );
    expect(typeOf(col('c', 'bigint', 'bigint'), '9223372036854775807')).toBe(mssql.VarChar);
    expect(typeOf(col('c', 'decimal', 'money'), '1.2300')).toBe(mssql.VarChar);
  });

  it('keeps varchar keys varchar and the rest by type', () => {
    expect(typeOf(col('c', 'string', 'varchar(20)'), 'a')).toBe(mssql.VarChar);
    expect(typeOf(col('c', 'string', 'nvarchar(20)'), 'a')).toBe(mssql.NVarChar);
    expect(typeOf(col('c', 'string', 'uniqueidentifier'), 'A')).toBe(mssql.UniqueIdentifier);
    expect(typeOf(col('c', 'int', 'int'), 1)).toBe(mssql.Int);
    expect(typeOf(col('c', 'float', 'float'), 1.5)).toBe(mssql.Float);
    expect(typeOf(col('c', 'boolean', 'bit'), true)).toBe(mssql.Bit);
    expect(typeOf(col('c', 'binary', 'varbinary(8)'), Buffer.from([1]))).toBe(mssql.VarBinary);
  });
});

describe('msSqlKeyGroups', () => {
  const keys = (count: number) => Array.from({ length: count }, (_, i) => [i, i]);

  it('keeps every query under SQL Server’s 2,100 parameters', () => {
    expect(msSqlKeyGroups(keys(1200), 1).map((g) => g?.length)).toEqual([
      KEYS_PER_QUERY,
      KEYS_PER_QUERY,
      200,
    ]);
    const wide = msSqlKeyGroups(keys(1000), 8);
    expect(wide.every((group) => (group?.length ?? 0) * 8 <= 2000)).toBe(true);
    expect(wide.flat()).toHaveLength(1000);
    expect(msSqlKeyGroups(null, 2)).toEqual([null]);
  });
});
