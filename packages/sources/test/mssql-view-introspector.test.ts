import { describe, expect, it } from 'vitest';
import { msSqlColumnsByTable } from '../src/mssql/mssql-introspector.ts';
import { msSqlViewsFromRows } from '../src/mssql/mssql-view-introspector.ts';

describe('msSqlViewsFromRows', () => {
  const columns = msSqlColumnsByTable([
    {
      table_name: 'order_totals',
      column_name: 'total',
      column_id: 2,
      type_name: 'decimal',
      max_length: 17,
      precision: 38,
      scale: 2,
      is_nullable: true,
    },
    {
      table_name: 'order_totals',
      column_name: 'customer_id',
      column_id: 1,
      type_name: 'int',
      max_length: 4,
      precision: 10,
      scale: 0,
      is_nullable: false,
    },
  ]);
  const views = msSqlViewsFromRows(
    [{ table_name: 'order_totals' }, { table_name: 'Active_customers' }],
    columns,
  );

  it('lists views by name, marked as views, with no keys', () => {
    expect(views.map((view) => [view.name, view.kind])).toEqual([
      ['Active_customers', 'view'],
      ['order_totals', 'view'],
    ]);
    for (const view of views) {
      expect(view.primaryKey).toEqual([]);
      expect(view.uniqueKeys).toEqual([]);
      expect(view.foreignKeys).toEqual([]);
      expect(view.estimatedRows).toBeNull();
    }
  });

  it('maps view columns as table columns are mapped, in column order', () => {
    expect(views[1]?.columns).toEqual([
      { name: 'customer_id', type: 'int', nullable: false, sourceType: 'int' },
      { name: 'total', type: 'decimal', nullable: true, sourceType: 'decimal(38,2)', scale: 2 },
    ]);
  });

  it('gives a view whose columns the catalog did not return none', () => {
    expect(views[0]?.columns).toEqual([]);
  });
});
