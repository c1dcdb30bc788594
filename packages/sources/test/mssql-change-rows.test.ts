import type { SourceColumn } from '@replix/engine';
import { describe, expect, it } from 'vitest';
import {
  CDC_OPERATION,
  groupMsSqlChanges,
  type MsSqlChangeRow,
  msSqlUnsentColumns,
  withUnsentValues,
} from '../src/mssql/mssql-change-rows.ts';

const lsn = (n: number) => n.toString(16).toUpperCase().padStart(20, '0');

const row = (
  table: string,
  commit: number,
  seq: number,
  operation: number,
  values: unknown[],
): MsSqlChangeRow => ({ table, lsn: lsn(commit), seqval: lsn(seq), operation, values });

describe('CDC operation codes', () => {
  it('are those of __$operation with all update old', () => {
    expect(CDC_OPERATION).toEqual({ delete: 1, insert: 2, updateBefore: 3, updateAfter: 4 });
  });
});

describe('groupMsSqlChanges', () => {
  it('maps delete, insert and update pairs, and groups by commit LSN', () => {
    const transactions = groupMsSqlChanges([
      row('t', 10, 1, 2, [1, 'a']),
      row('t', 10, 2, 3, [1, 'a']),
      row('t', 10, 2, 4, [1, 'b']),
      row('t', 20, 5, 1, [1, 'b']),
    ]);
    expect(transactions).toEqual([
      {
        lsn: lsn(10),
        changes: [
          { op: 'insert', table: 't', row: [1, 'a'] },
          { op: 'update', table: 't', before: [1, 'a'], after: [1, 'b'] },
        ],
      },
      { lsn: lsn(20), changes: [{ op: 'delete', table: 't', row: [1, 'b'] }] },
    ]);
  });

  it('merges the tables of one transaction by sequence value', () => {
    // Each capture instance is queried on its own; the rows arrive table by table.
    const orders = [row('orders', 7, 1, 2, [1]), row('orders', 7, 3, 2, [2])];
    const items = [row('items', 7, 2, 2, [10]), row('items', 9, 1, 1, [10])];
    const transactions = groupMsSqlChanges([...orders, ...items]);
    expect(transactions.map((t) => t.lsn)).toEqual([lsn(7), lsn(9)]);
    expect(transactions[0]!.changes.map((c) => `${c.table}:${c.op}`)).toEqual([
      'orders:insert',
      'items:insert',
      'orders:insert',
    ]);
  });

  it('puts a before-image ahead of its after-image whatever order they come in', () => {
    const transactions = groupMsSqlChanges([
      row('t', 1, 1, 4, [1, 'new']),
      row('t', 1, 1, 3, [1, 'old']),
    ]);
    expect(transactions[0]!.changes).toEqual([
      { op: 'update', table: 't', before: [1, 'old'], after: [1, 'new'] },
    ]);
  });

  it('orders by LSN bytes, not by when a row was read', () => {
    const transactions = groupMsSqlChanges([row('t', 0x100, 1, 2, [2]), row('t', 0xff, 1, 2, [1])]);
    expect(transactions.map((t) => t.lsn)).toEqual([lsn(0xff), lsn(0x100)]);
  });

  it('keeps an after-image without its before-image as an update with before null', () => {
    expect(groupMsSqlChanges([row('t', 1, 1, 4, [1])])[0]!.changes).toEqual([
      { op: 'update', table: 't', before: null, after: [1] },
    ]);
  });

  it('drops a before-image with no after-image and unknown operations', () => {
    expect(groupMsSqlChanges([row('t', 1, 1, 3, [1]), row('t', 1, 2, 9, [2])])).toEqual([
      { lsn: lsn(1), changes: [] },
    ]);
    expect(groupMsSqlChanges([])).toEqual([]);
  });
});

describe('values CDC does not send', () => {
  const col = (name: string, sourceType: string): SourceColumn => ({
    name,
    type: 'string',
    nullable: true,
    sourceType,
  });
  const columns = [
    col('id', 'int'),
    col('notes', 'nvarchar(max)'),
    col('legacy', 'ntext'),
    col('doc', 'xml'),
    col('name', 'nvarchar(40)'),
  ];
  const unsent = msSqlUnsentColumns(columns);

  it('finds large objects for before-images and the legacy ones for deletes', () => {
    expect(unsent).toEqual({ beforeImage: [1, 2, 3], deleteImage: [2] });
  });

  it('turns their NULLs into undefined in before-images and deletes only', () => {
    const values = () => [1, null, null, null, null];
    expect(withUnsentValues(3, values(), unsent)).toEqual([
      1,
      undefined,
      undefined,
      undefined,
      null,
    ]);
    expect(withUnsentValues(1, values(), unsent)).toEqual([1, null, undefined, null, null]);
    expect(withUnsentValues(4, values(), unsent)).toEqual(values());
    expect(withUnsentValues(2, values(), unsent)).toEqual(values());
    // A value that was sent stays.
    expect(withUnsentValues(3, [1, 'x', null, null, null], unsent)[1]).toBe('x');
  });
});
