import type { SourceColumn } from '@replix/engine';
import { describe, expect, it } from 'vitest';
import { ReplicationError } from '../src/errors.ts';
import {
  columnDifferences,
  PostgresChangeDecoder,
} from '../src/postgres/postgres-change-decoder.ts';
import type { RelationColumn } from '../src/postgres/postgres-pgoutput.ts';

const INT4 = 23;
const TEXT = 25;
const TIMESTAMPTZ = 1184;
const TYPE_NAMES: Record<number, string> = {
  [INT4]: 'integer',
  [TEXT]: 'text',
  [TIMESTAMPTZ]: 'timestamp with time zone',
  20: 'bigint',
};
const typeNames = async (columns: readonly RelationColumn[]) =>
  columns.map((column) => TYPE_NAMES[column.typeOid] ?? '???');

const COLUMNS: SourceColumn[] = [
  { name: 'id', type: 'int', nullable: false, sourceType: 'integer' },
  { name: 'at', type: 'timestamp', nullable: true, sourceType: 'timestamp with time zone' },
  { name: 'note', type: 'string', nullable: true, sourceType: 'text' },
];

const column = (name: string, typeOid: number, isKey = false): RelationColumn => ({
  name,
  typeOid,
  typeMod: -1,
  isKey,
});

/** The table as the stream describes it, columns in another order than requested. */
const RELATION = {
  tag: 'relation' as const,
  relationId: 100,
  schema: 'public',
  name: 'events',
  columns: [column('note', TEXT), column('id', INT4, true), column('at', TIMESTAMPTZ)],
};

function decoder(): PostgresChangeDecoder {
  return new PostgresChangeDecoder('public', [{ table: 'events', columns: COLUMNS }], typeNames);
}

describe('PostgresChangeDecoder', () => {
  it('maps rows to the requested column order and converts values', async () => {
    const events = decoder();
    expect(await events.relation(RELATION)).toBeNull();
    expect(
      events.changes({
        tag: 'insert',
        relationId: 100,
        after: ['hi', '7', '2024-01-02 03:04:05.5+00'],
      }),
    ).toEqual([
      { op: 'insert', table: 'events', row: [7, Date.UTC(2024, 0, 2, 3, 4, 5, 500) * 1000, 'hi'] },
    ]);
  });

  it('leaves unknown columns of key-only old rows and unchanged TOAST undefined', async () => {
    const events = decoder();
    await events.relation(RELATION);
    const [update] = events.changes({
      tag: 'update',
      relationId: 100,
      beforeKind: 'key',
      before: [null, '7', null],
      after: [undefined, '8', null],
    });
    expect(update).toEqual({
      op: 'update',
      table: 'events',
      before: [7, undefined, undefined],
      after: [8, null, undefined],
    });
    const [remove] = events.changes({
      tag: 'delete',
      relationId: 100,
      beforeKind: 'old',
      before: ['x', '8', null],
    });
    expect(remove).toEqual({ op: 'delete', table: 'events', row: [8, null, 'x'] });
  });

  it('ignores other tables and other schemas', async () => {
    const events = decoder();
    await events.relation({ ...RELATION, relationId: 200, name: 'other' });
    await events.relation({ ...RELATION, relationId: 300, schema: 'audit' });
    expect(events.changes({ tag: 'insert', relationId: 200, after: ['x', '1', null] })).toEqual([]);
    expect(events.changes({ tag: 'truncate', relationIds: [200, 300] })).toEqual([]);
  });

  it('reports a changed table once, then drops its changes', async () => {
    const events = decoder();
    await events.relation(RELATION);
    const narrowed = { ...RELATION, columns: RELATION.columns.slice(0, -1) };
    const change = await events.relation(narrowed);
    expect(change).toMatchObject({ op: 'schemaChange', table: 'events' });
    expect((change as { detail: string }).detail).toMatch(/dropped/);
    expect(await events.relation(narrowed)).toBeNull();
    expect(events.changes({ tag: 'insert', relationId: 100, after: ['x', '1'] })).toEqual([]);
    expect(events.changes({ tag: 'truncate', relationIds: [100] })).toEqual([]);
  });

  it('reports a renamed table, and one dropped and created again', async () => {
    const renamed = decoder();
    await renamed.relation(RELATION);
    expect(await renamed.relation({ ...RELATION, name: 'events_old' })).toEqual({
      op: 'schemaChange',
      table: 'events',
      detail: 'table renamed to "events_old"',
    });

    const recreated = decoder();
    await recreated.relation(RELATION);
    expect(await recreated.relation({ ...RELATION, relationId: 101 })).toEqual({
      op: 'schemaChange',
      table: 'events',
      detail: 'table dropped and created again',
    });
  });

  it('fails on a change to a table the stream never described', () => {
    expect(() => decoder().changes({ tag: 'insert', relationId: 1, after: [] })).toThrow(
      ReplicationError,
    );
  });
});

describe('columnDifferences', () => {
  it('names dropped and retyped columns, and lets added ones pass', () => {
    const columns = [column('id', 20), column('note', TEXT), column('added', INT4)];
    expect(columnDifferences(COLUMNS, columns, ['bigint', 'text', 'integer'])).toEqual([
      'column "id" changed type from integer to bigint',
      'column "at" dropped',
    ]);
  });
});
