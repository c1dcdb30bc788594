import type { SourceColumn } from '@replix/engine';
import { describe, expect, it } from 'vitest';
import {
  MSSQL_WINDOW_SQL,
  msSqlChangeFunction,
  msSqlChangesSql,
  msSqlSelectExpression,
  msSqlSelectSql,
  msSqlStringLiteral,
  quoteMsSqlIdentifier,
} from '../src/mssql/mssql-sql.ts';
import { msSqlColumnType } from '../src/mssql/mssql-types.ts';

const column = (name: string, sourceType = 'int'): SourceColumn => ({
  name,
  type: msSqlColumnType(sourceType),
  nullable: true,
  sourceType,
});

describe('SQL Server identifiers and literals', () => {
  it('wraps names in brackets and doubles an embedded closing bracket', () => {
    expect(quoteMsSqlIdentifier('orders')).toBe('[orders]');
    expect(quoteMsSqlIdentifier('we]ird')).toBe('[we]]ird]');
    expect(quoteMsSqlIdentifier('[a] b"c`')).toBe('[[a]] b"c`]');
    expect(quoteMsSqlIdentifier('x]; DROP TABLE t; --')).toBe('[x]]; DROP TABLE t; --]');
  });

  it('writes Unicode literals with doubled quotes', () => {
    expect(msSqlStringLiteral("O'Brien")).toBe("N'O''Brien'");
  });
});

describe('snapshot SELECT text', () => {
  it('selects the requested columns in order from [schema].[table], the where in parentheses', () => {
    expect(msSqlSelectSql('dbo', 'T', [column('b'), column('a')], undefined)).toBe(
      'SELECT [b], [a] FROM [dbo].[T]',
    );
    expect(msSqlSelectSql('sales', 'or]ders', [column('id')], 'x > 0 -- live rows')).toBe(
      'SELECT [id] FROM [sales].[or]]ders] WHERE (x > 0 -- live rows\n)',
    );
    expect(msSqlSelectSql('dbo', 't', [column('id')], '  ')).toBe('SELECT [id] FROM [dbo].[t]');
  });

  it('casts the types tedious would read lossily or as objects', () => {
    const expressions = Object.fromEntries(
      [
        'decimal(38,10)',
        'numeric(5,0)',
        'money',
        'smallmoney',
        'sql_variant',
        'hierarchyid',
        'geometry',
        'geography',
        'json',
        'bigint',
        'datetimeoffset(7)',
        'nvarchar(max)',
      ].map((type) => [type, msSqlSelectExpression(column('c', type))]),
    );
    expect(expressions).toEqual({
      'decimal(38,10)': 'CONVERT(varchar(50), [c]) AS [c]',
      'numeric(5,0)': 'CONVERT(varchar(50), [c]) AS [c]',
      money: 'CONVERT(varchar(30), [c], 2) AS [c]',
      smallmoney: 'CONVERT(varchar(30), [c], 2) AS [c]',
      sql_variant: 'CONVERT(nvarchar(4000), [c]) AS [c]',
      hierarchyid: '[c].ToString() AS [c]',
      geometry: '[c].ToString() AS [c]',
      geography: '[c].ToString() AS [c]',
      json: 'CONVERT(nvarchar(max), [c]) AS [c]',
      bigint: '[c]',
      'datetimeoffset(7)': '[c]',
      'nvarchar(max)': '[c]',
    });
  });
});

describe('CDC SQL text', () => {
  it('names the change function of a capture instance, quoted', () => {
    expect(msSqlChangeFunction('dbo_orders')).toBe('cdc.[fn_cdc_get_all_changes_dbo_orders]');
    expect(msSqlChangeFunction('dbo_we]ird')).toBe('cdc.[fn_cdc_get_all_changes_dbo_we]]ird]');
  });

  it('reads changes after the last LSN with both update images, in log order', () => {
    const sql = msSqlChangesSql('dbo_orders', [column('id'), column('total', 'decimal(12,2)')]);
    expect(sql).toBe(
      [
        'DECLARE @from_lsn binary(10) = sys.fn_cdc_increment_lsn(@last_lsn);',
        'SELECT [id], CONVERT(varchar(50), [total]) AS [total], [__$start_lsn], [__$seqval], [__$operation]',
        "FROM cdc.[fn_cdc_get_all_changes_dbo_orders](@from_lsn, @to_lsn, N'all update old')",
        'ORDER BY [__$start_lsn], [__$seqval], [__$operation]',
      ].join('\n'),
    );
  });

  it('bounds a poll by the max LSN and by a number of real transactions', () => {
    expect(MSSQL_WINDOW_SQL).toContain('sys.fn_cdc_get_max_lsn()');
    expect(MSSQL_WINDOW_SQL).toContain('sys.fn_cdc_increment_lsn(@last_lsn)');
    expect(MSSQL_WINDOW_SQL).toContain('SELECT TOP (@limit) m.start_lsn FROM cdc.lsn_time_mapping');
    expect(MSSQL_WINDOW_SQL).toContain('m.tran_id <> 0x00');
    // With CDC off the mapping table does not exist: the IF keeps the query from naming it.
    expect(MSSQL_WINDOW_SQL.indexOf('IF @max_lsn IS NULL')).toBeLessThan(
      MSSQL_WINDOW_SQL.indexOf('cdc.lsn_time_mapping'),
    );
  });
});
