import {
  type CompiledTable,
  compileSchema,
  GenerationBuilder,
  parseSchemaConfig,
  type SourceSchema,
} from '@replix/engine';
import type { SourceChange } from '@replix/sources';
import { describe, expect, it } from 'vitest';
import { mapChanges } from '../src/replication/change-mapper.ts';
import { recheckRows } from '../src/replication/recheck-rows.ts';

const SOURCE: SourceSchema = {
  tables: [
    {
      name: 'live',
      columns: [
        { name: 'id', type: 'int', nullable: false, sourceType: 'int' },
        { name: 'name', type: 'string', nullable: true, sourceType: 'varchar(20)' },
        { name: 'active', type: 'boolean', nullable: false, sourceType: 'tinyint(1)' },
      ],
      primaryKey: ['id'],
      uniqueKeys: [],
      foreignKeys: [],
      estimatedRows: null,
    },
  ],
};

const schema = compileSchema(
  SOURCE,
  parseSchemaConfig({
    tables: [{ name: 'live', where: 'active = 1', where_columns: ['active'] }],
  }),
);
const live = schema.tables[0] as CompiledTable;

/** A source whose reads answer from `states` in turn (the last one for every later read). */
function source(...states: Record<number, [string | null, boolean]>[]) {
  const reads: number[][] = [];
  const fetch = async (_table: CompiledTable, keys: readonly (readonly unknown[])[] | null) => {
    const state = states[Math.min(reads.length, states.length - 1)] ?? {};
    reads.push((keys ?? []).map((key) => Number(key[0])));
    return (keys ?? []).flatMap((key) => {
      const row = state[Number(key[0])];
      return row ? [[Number(key[0]), row[0], row[1], row[1] ? 1 : 0]] : [];
    });
  };
  return { reads, fetch };
}

/** Maps one tick of `changes` over a generation serving `served` rows of `live`. */
async function tick(
  changes: SourceChange[],
  fetch: ReturnType<typeof source>['fetch'],
  served: unknown[][] = [],
) {
  const builder = new GenerationBuilder(schema);
  builder.loader('live').appendRows(served);
  const generation = builder.finish(1);
  return mapChanges(schema, changes, fetch, (t, row) => generation.hasKey(t.name, row));
}

describe('re-reading filtered rows that the source shows older than its change stream', () => {
  it('serves a row inserted into the where even when the first read does not see it yet', async () => {
    const { reads, fetch } = source({}, { 1: ['a', true] });
    const mapped = await tick([{ op: 'insert', table: 'live', row: [1, 'a', true] }], fetch);
    expect(mapped.changes.get('live')).toEqual([{ op: 'insert', row: [1, 'a', true] }]);
    expect(reads).toEqual([[1], [1]]);
    expect(mapped.staleReads).toBe(1);
  });

  it('serves a row updated into the where when the first read shows it as it was', async () => {
    const { reads, fetch } = source({ 2: ['b', false] }, { 2: ['b', false] }, { 2: ['b', true] });
    const mapped = await tick(
      [{ op: 'update', table: 'live', before: [2, 'b', false], after: [2, 'b', true] }],
      fetch,
    );
    expect(mapped.changes.get('live')).toEqual([{ op: 'insert', row: [2, 'b', true] }]);
    expect(reads).toEqual([[2], [2], [2]]);
    expect(mapped.staleReads).toBe(2);
  });

  it('removes a row updated out of the where, reading once when the read agrees', async () => {
    const { reads, fetch } = source({ 3: ['c', false] });
    const mapped = await tick(
      [{ op: 'update', table: 'live', before: [3, 'c', true], after: [3, 'c', false] }],
      fetch,
      [[3, 'c', true]],
    );
    expect(mapped.changes.get('live')).toEqual([{ op: 'delete', row: [3, null, null] }]);
    expect(reads).toEqual([[3]]);
    expect(mapped.staleReads).toBe(0);
  });

  it('keeps a deleted row out when the first read still shows it', async () => {
    const { reads, fetch } = source({ 4: ['d', true] }, {});
    const mapped = await tick(
      [
        { op: 'insert', table: 'live', row: [4, 'd', true] },
        { op: 'delete', table: 'live', row: [4, 'd', true] },
      ],
      fetch,
    );
    expect(mapped.changes.get('live')).toEqual([
      { op: 'delete', row: [4, 'd', true] },
      { op: 'delete', row: [4, null, null] },
    ]);
    expect(reads).toEqual([[4], [4]]);
  });

  it('compares with the row a key change left: the old key gone, the new one as sent', async () => {
    const { reads, fetch } = source({ 5: ['e', true] }, { 6: ['e', true] });
    const mapped = await tick(
      [{ op: 'update', table: 'live', before: [5, 'e', true], after: [6, 'e', true] }],
      fetch,
      [[5, 'e', true]],
    );
    expect(mapped.changes.get('live')).toEqual([
      { op: 'delete', row: [5, 'e', true] },
      { op: 'insert', row: [6, 'e', true] },
    ]);
    expect(reads).toEqual([[6], [6]]);
  });

  it('reads only the keys that disagreed again, and takes a row that changed since after a few waits', async () => {
    const { reads, fetch } = source({ 7: ['newer', true], 8: ['h', false] });
    const waits: number[] = [];
    const rechecked = await recheckRows(
      live,
      new Map([
        ['7', { key: [7], image: [7, 'g', true] }],
        ['8', { key: [8], image: [8, 'h', false] }],
      ]),
      (key) => String(key[0]),
      fetch,
      async (ms) => waits.push(ms),
    );
    expect(rechecked.served).toEqual([[7, 'newer', true]]);
    expect(rechecked.unserved).toEqual([[8]]);
    expect(reads).toEqual([[7, 8], [7], [7], [7], [7], [7]]);
    expect(waits).toEqual([5, 15, 40, 100, 250]);
    expect(rechecked.staleReads).toBe(5);
  });

  it('takes the read as it comes for a row whose change the stream did not carry', async () => {
    const { reads, fetch } = source({});
    const rechecked = await recheckRows(
      live,
      new Map([['9', { key: [9], image: undefined }]]),
      (key) => String(key[0]),
      fetch,
    );
    expect(rechecked).toEqual({ served: [], unserved: [[9]], staleReads: 0 });
    expect(reads).toEqual([[9]]);
  });
});
