import { describe, expect, it } from 'vitest';
import { msSqlColumnsSql, msSqlSchemaFromRows } from '../src/mssql/mssql-introspector.ts';

const columnRow = (
  table: string,
  name: string,
  columnId: number,
  typeName: string,
  maxLength: number,
  precision = 0,
  scale = 0,
  nullable = false,
) => ({
  table_name: table,
  column_name: name,
  column_id: columnId,
  type_name: typeName,
  max_length: maxLength,
  precision,
  scale,
  is_nullable: nullable,
});

describe('msSqlSchemaFromRows', () => {
  const schema = msSqlSchemaFromRows({
    tables: [
      { table_name: 'order_items', estimated_rows: '120' },
      { table_name: 'Orders', estimated_rows: '3' },
      { table_name: 'empty', estimated_rows: null },
    ],
    columns: [
      columnRow('Orders', 'note', 3, 'nvarchar', 80, 0, 0, true),
      columnRow('Orders', 'id', 1, 'int', 4, 10),
      columnRow('Orders', 'total', 2, 'decimal', 9, 12, 2),
      columnRow('order_items', 'order_id', 1, 'int', 4, 10),
      columnRow('order_items', 'line', 2, 'smallint', 2, 5),
      columnRow('order_items', 'price', 3, 'money', 8, 19, 4, true),
      columnRow('order_items', 'at', 4, 'datetime2', 7, 23, 3),
      columnRow('empty', 'id', 1, 'uniqueidentifier', 16),
    ],
    uniqueIndexes: [
      {
        table_name: 'Orders',
        index_name: 'PK_Orders',
        is_primary_key: true,
        key_ordinal: 1,
        column_name: 'id',
      },
      {
        table_name: 'order_items',
        index_name: 'UQ_b',
        is_primary_key: false,
        key_ordinal: 1,
        column_name: 'at',
      },
      {
        table_name: 'order_items',
        index_name: 'PK_items',
        is_primary_key: true,
        key_ordinal: 2,
        column_name: 'line',
      },
      {
        table_name: 'order_items',
        index_name: 'PK_items',
        is_primary_key: true,
        key_ordinal: 1,
        column_name: 'order_id',
      },
      {
        table_name: 'order_items',
        index_name: 'UQ_a',
        is_primary_key: false,
        key_ordinal: 1,
        column_name: 'price',
      },
    ],
    foreignKeys: [
      {
        table_name: 'order_items',
        constraint_name: 'FK_order',
        constraint_column_id: 1,
        column_name: 'order_id',
        referenced_table: 'Orders',
        referenced_column: 'id',
      },
      {
        table_name: 'order_items',
        constraint_name: 'FK_gone',
        constraint_column_id: 1,
        column_name: 'line',
        referenced_table: 'elsewhere',
        referenced_column: 'id',
      },
    ],
  });

  it('sorts tables by name and columns by ordinal, with source types and nullability', () => {
    expect(schema.tables.map((table) => table.name)).toEqual(['Orders', 'empty', 'order_items']);
    expect(schema.tables[0]!.columns).toEqual([
      { name: 'id', type: 'int', nullable: false, sourceType: 'int' },
      { name: 'total', type: 'decimal', nullable: false, sourceType: 'decimal(12,2)', scale: 2 },
      { name: 'note', type: 'string', nullable: true, sourceType: 'nvarchar(40)' },
    ]);
    expect(schema.tables[2]!.columns.map((c) => [c.sourceType, c.type, c.scale])).toEqual([
      ['int', 'int', undefined],
      ['smallint', 'int', undefined],
      ['money', 'decimal', 4],
      ['datetime2(3)', 'timestamp', undefined],
    ]);
    expect(schema.tables[2]!.columns.map((c) => c.precision)).toEqual([
      undefined,
      undefined,
      undefined,
      3,
    ]);
  });

  it('reads composite primary keys in key order and unique keys by index name', () => {
    const items = schema.tables[2]!;
    expect(items.primaryKey).toEqual(['order_id', 'line']);
    expect(items.uniqueKeys).toEqual([['price'], ['at']]);
    expect(schema.tables[1]!.primaryKey).toEqual([]);
  });

  it('keeps foreign keys to tables of the schema only', () => {
    expect(schema.tables[2]!.foreignKeys).toEqual([
      {
        name: 'FK_order',
        columns: ['order_id'],
        referencedTable: 'Orders',
        referencedColumns: ['id'],
      },
    ]);
  });

  it('takes row estimates from sys.partitions, null when there is none', () => {
    expect(schema.tables.map((table) => table.estimatedRows)).toEqual([3, null, 120]);
  });
});

describe('msSqlColumnsSql', () => {
  it('reads alias types by their base type', () => {
    expect(msSqlColumnsSql()).toContain(
      'CASE WHEN ty.is_user_defined = 1 AND ty.is_assembly_type = 0 THEN bt.name ELSE ty.name END',
    );
    expect(msSqlColumnsSql()).not.toContain('@t0');
  });

  it('narrows to named tables through parameters', () => {
    expect(msSqlColumnsSql(3)).toContain('AND t.name IN (@t0, @t1, @t2)');
  });
});
