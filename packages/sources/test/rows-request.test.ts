import type { SourceColumn } from '@replix/engine';
import { describe, expect, it } from 'vitest';
import { KEYS_PER_QUERY, keyGroups, rowsWhereClause } from '../src/rows-request.ts';

const columns: SourceColumn[] = [{ name: 'id', type: 'int', nullable: false, sourceType: 'int' }];
const quote = (name: string) => `"${name}"`;

describe('rowsWhereClause', () => {
  it('combines the where, the key tuples and the change column, values as parameters', () => {
    const { clause, params } = rowsWhereClause(
      {
        table: 't',
        columns,
        keyColumns: ['a', 'b'],
        keys: null,
        where: 'active',
        after: { column: 'updated', value: 5 },
      },
      [
        [1, 'x'],
        [2, "y'); DROP TABLE t; --"],
      ],
      quote,
      (i) => `$${i}`,
    );
    expect(clause).toBe(
      ' WHERE (active\n) AND ("a", "b") IN (($1, $2), ($3, $4)) AND "updated" > $5',
    );
    expect(params).toEqual([1, 'x', 2, "y'); DROP TABLE t; --", 5]);
  });

  it('is empty with nothing to filter on', () => {
    expect(
      rowsWhereClause({ table: 't', columns, keyColumns: [], keys: null }, null, quote, () => '?'),
    ).toEqual({ clause: '', params: [] });
  });
});

describe('keyGroups', () => {
  it('bounds each query to KEYS_PER_QUERY keys', () => {
    const keys = Array.from({ length: KEYS_PER_QUERY * 2 + 1 }, (_, i) => [i]);
    expect(keyGroups(keys).map((group) => group?.length)).toEqual([
      KEYS_PER_QUERY,
      KEYS_PER_QUERY,
      1,
    ]);
    expect(keyGroups(null)).toEqual([null]);
  });
});
