import type { SourceColumn } from '@replix/engine';
import { describe, expect, it } from 'vitest';
import {
  type MsSqlCaptureInstance,
  type MsSqlTableState,
  planMsSqlTable,
} from '../src/mssql/mssql-capture-plan.ts';
import { MsSqlLsn } from '../src/mssql/mssql-position.ts';

const lsn = (n: number) => MsSqlLsn.parse(n.toString(16).padStart(20, '0'));
const col = (name: string, sourceType = 'int'): SourceColumn => ({
  name,
  type: 'int',
  nullable: false,
  sourceType,
});
const instance = (name: string, minLsn: number, columns: string[]): MsSqlCaptureInstance => ({
  name,
  minLsn: lsn(minLsn),
  columns: new Set(columns),
});

const base: MsSqlTableState = {
  schema: 'dbo',
  table: 'orders',
  requested: [col('id'), col('note', 'nvarchar(40)')],
  current: [col('id'), col('note', 'nvarchar(40)')],
  instances: [instance('dbo_orders', 100, ['id', 'note'])],
  next: lsn(500),
};

describe('planMsSqlTable', () => {
  it('reads through the capture instance when everything matches', () => {
    expect(planMsSqlTable(base)).toEqual({ kind: 'read', captureInstance: 'dbo_orders' });
  });

  it('ignores columns added to the table: the capture instance does not send them', () => {
    const current = [...base.current!, col('added')];
    expect(planMsSqlTable({ ...base, current }).kind).toBe('read');
  });

  it('reports a dropped table, a dropped column and a changed type as schema changes', () => {
    expect(planMsSqlTable({ ...base, current: undefined })).toEqual({
      kind: 'schemaChange',
      detail: 'The table was dropped.',
    });
    expect(planMsSqlTable({ ...base, current: [col('id')] })).toEqual({
      kind: 'schemaChange',
      detail: 'Column "note" was dropped.',
    });
    expect(planMsSqlTable({ ...base, current: [col('id'), col('note', 'nvarchar(80)')] })).toEqual({
      kind: 'schemaChange',
      detail: 'Column "note" changed type from nvarchar(40) to nvarchar(80).',
    });
  });

  it('says how to enable CDC for a table without a capture instance', () => {
    const plan = planMsSqlTable({ ...base, instances: [] });
    expect(plan.kind).toBe('notCaptured');
    expect(plan.kind === 'notCaptured' && plan.issue).toBe(
      "Enable CDC for table [dbo].[orders]: EXEC sys.sp_cdc_enable_table @source_schema = N'dbo', @source_name = N'orders', @role_name = NULL.",
    );
  });

  it('names the columns no capture instance captures', () => {
    const plan = planMsSqlTable({ ...base, instances: [instance('dbo_orders', 100, ['id'])] });
    expect(plan).toMatchObject({
      kind: 'notCaptured',
      detail: 'No capture instance of table "orders" captures "note".',
    });
    expect(plan.kind === 'notCaptured' && plan.issue).toContain(
      "@capture_instance = N'dbo_orders_2'",
    );
  });

  it('prefers the covering instance with the longest history', () => {
    const instances = [
      instance('dbo_orders_v2', 300, ['id', 'note', 'added']),
      instance('dbo_orders', 100, ['id', 'note']),
      instance('dbo_orders_narrow', 50, ['id']),
    ];
    expect(planMsSqlTable({ ...base, instances })).toEqual({
      kind: 'read',
      captureInstance: 'dbo_orders',
    });
  });

  it('expires a position whose next LSN is older than the history kept', () => {
    expect(planMsSqlTable({ ...base, next: lsn(99) })).toEqual({
      kind: 'expired',
      captureInstance: 'dbo_orders',
      minLsn: lsn(100),
    });
    expect(planMsSqlTable({ ...base, next: lsn(100) }).kind).toBe('read');
  });

  it('treats a zero low end (none established yet) as no limit', () => {
    const instances = [instance('dbo_orders', 0, ['id', 'note'])];
    expect(planMsSqlTable({ ...base, instances, next: lsn(1) }).kind).toBe('read');
  });
});
