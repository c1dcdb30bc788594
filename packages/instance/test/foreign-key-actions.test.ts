import {
  type CompiledSchema,
  type CompiledTable,
  compileSchema,
  type ForeignKeyRule,
  GenerationBuilder,
  parseSchemaConfig,
  type SourceForeignKey,
  type SourceSchema,
  type SourceTable,
} from '@replix/engine';
import type { SourceChange } from '@replix/sources';
import { describe, expect, it } from 'vitest';
import { mapChanges } from '../src/replication/change-mapper.ts';
import { ForeignKeyGraph } from '../src/replication/foreign-key-graph.ts';

/** A source table of INT columns (VARCHAR for `name`), the first column the primary key. */
function table(
  name: string,
  columns: string[],
  foreignKeys: SourceForeignKey[] = [],
  primaryKey = [columns[0] as string],
): SourceTable {
  return {
    name,
    columns: columns.map((column) => ({
      name: column,
      type: column === 'name' ? 'string' : 'int',
      nullable: !primaryKey.includes(column),
      sourceType: column === 'name' ? 'varchar(20)' : 'int',
    })),
    primaryKey,
    uniqueKeys: [],
    foreignKeys,
    estimatedRows: null,
  };
}

function fk(
  name: string,
  columns: string[],
  referencedTable: string,
  referencedColumns: string[],
  onDelete: ForeignKeyRule,
  onUpdate: ForeignKeyRule = 'restrict',
): SourceForeignKey {
  return { name, columns, referencedTable, referencedColumns, onDelete, onUpdate };
}

const SOURCE: SourceSchema = {
  tables: [
    table('country', ['id', 'name']),
    table(
      'city',
      ['id', 'country_id'],
      [fk('city_country', ['country_id'], 'country', ['id'], 'cascade', 'cascade')],
    ),
    table(
      'address',
      ['id', 'city_id'],
      [fk('address_city', ['city_id'], 'city', ['id'], 'cascade', 'cascade')],
    ),
    table(
      'store',
      ['id', 'address_id'],
      [fk('store_address', ['address_id'], 'address', ['id'], 'set null', 'cascade')],
    ),
    table(
      'category',
      ['id', 'parent_id'],
      [fk('category_parent', ['parent_id'], 'category', ['id'], 'cascade')],
    ),
    table('edition', ['film', 'num'], [], ['film', 'num']),
    table(
      'copy',
      ['id', 'film', 'num'],
      [fk('copy_edition', ['film', 'num'], 'edition', ['film', 'num'], 'set default', 'cascade')],
    ),
    table('owner', ['id']),
    table('pet', ['id', 'owner_id'], [fk('pet_owner', ['owner_id'], 'owner', ['id'], 'cascade')]),
    table('toy', ['id', 'pet_id'], [fk('toy_pet', ['pet_id'], 'pet', ['id'], 'cascade')]),
    table('shelf', ['id']),
    table(
      'book',
      ['id', 'shelf_id', 'open'],
      [fk('book_shelf', ['shelf_id'], 'shelf', ['id'], 'cascade', 'set null')],
    ),
  ],
};

const ROWS: Record<string, unknown[][]> = {
  country: [
    [1, 'a'],
    [2, 'b'],
  ],
  city: [
    [10, 1],
    [11, 1],
    [20, 2],
  ],
  address: [
    [100, 10],
    [101, 11],
    [200, 20],
  ],
  store: [
    [1, 100],
    [2, 200],
  ],
  category: [
    [1, null],
    [2, 1],
    [3, 2],
    [4, 3],
    [5, null],
  ],
  edition: [[7, 1]],
  copy: [[1, 7, 1]],
  owner: [[1]],
  toy: [[1, 1]],
  shelf: [[1], [2]],
  book: [
    [1, 1, 1],
    [2, 2, 1],
  ],
};

function served(config: Record<string, unknown>): CompiledSchema {
  return compileSchema(SOURCE, parseSchemaConfig(config));
}

const ALL_BUT_PET = {
  tables: SOURCE.tables
    .filter((t) => t.name !== 'pet')
    .map((t) =>
      t.name === 'book'
        ? { name: 'book', where: 'open = 1', where_columns: ['open'] }
        : { name: t.name },
    ),
};

/** Maps `changes` as a MySQL tick would, with the generation holding `ROWS`. */
async function tick(schema: CompiledSchema, changes: SourceChange[]) {
  const builder = new GenerationBuilder(schema);
  for (const t of schema.tables) builder.loader(t.name).appendRows(ROWS[t.name] ?? []);
  const generation = builder.finish(1);
  const fetched: { table: string; keys: (readonly unknown[])[] | null }[] = [];
  const mapped = await mapChanges(
    schema,
    changes,
    async (t: CompiledTable, keys) => {
      fetched.push({ table: t.name, keys: keys ? [...keys] : null });
      return [];
    },
    (t, row) => generation.hasKey(t.name, row),
    { graph: new ForeignKeyGraph(schema), generation },
  );
  return { ...mapped, fetched, get: (name: string) => mapped.changes.get(name) ?? [] };
}

describe('foreign-key actions derived for a change stream that leaves them out', () => {
  it('cascades a delete down three levels and sets the fourth to NULL', async () => {
    const result = await tick(served({}), [{ op: 'delete', table: 'country', row: [1, 'a'] }]);
    expect(result.get('city')).toEqual([
      { op: 'delete', row: [10, 1] },
      { op: 'delete', row: [11, 1] },
    ]);
    expect(result.get('address')).toEqual([
      { op: 'delete', row: [100, 10] },
      { op: 'delete', row: [101, 11] },
    ]);
    expect(result.get('store')).toEqual([{ op: 'update', before: [1, 100], after: [1, null] }]);
    expect(result.foreignKeyReReads.size).toBe(0);
    expect(result.fetched).toEqual([]);
  });

  it('rewrites children of a changed key, and their children in turn', async () => {
    const result = await tick(served({}), [
      { op: 'update', table: 'city', before: [20, 2], after: [21, 2] },
      // The source's image already has the cascaded value.
      { op: 'update', table: 'address', before: [200, 21], after: [201, 21] },
    ]);
    expect(result.get('address')).toEqual([
      { op: 'update', before: [200, 20], after: [200, 21] },
      { op: 'update', before: [200, 21], after: [201, 21] },
    ]);
    expect(result.get('store')).toEqual([{ op: 'update', before: [2, 200], after: [2, 201] }]);
  });

  it('leaves children alone when an update keeps the referenced columns', async () => {
    const result = await tick(served({}), [
      { op: 'update', table: 'country', before: [1, 'a'], after: [1, 'z'] },
    ]);
    expect([...result.changes.keys()]).toEqual(['country']);
  });

  it('deletes a whole subtree of a self-referencing table, each row once', async () => {
    const result = await tick(served({}), [
      { op: 'delete', table: 'category', row: [1, null] },
      { op: 'delete', table: 'category', row: [3, 2] },
    ]);
    expect(result.get('category')).toEqual([
      { op: 'delete', row: [1, null] },
      { op: 'delete', row: [2, 1] },
      { op: 'delete', row: [3, 2] },
      { op: 'delete', row: [4, 3] },
      { op: 'delete', row: [3, 2] },
    ]);
  });

  it('finds children written earlier in the same tick and skips those already gone', async () => {
    const result = await tick(served({}), [
      { op: 'insert', table: 'city', row: [12, 1] },
      { op: 'delete', table: 'city', row: [10, 1] },
      { op: 'delete', table: 'country', row: [1, 'a'] },
    ]);
    expect(result.get('city')).toEqual([
      { op: 'insert', row: [12, 1] },
      { op: 'delete', row: [10, 1] },
      { op: 'delete', row: [11, 1] },
      { op: 'delete', row: [12, 1] },
    ]);
  });

  it('re-reads what a table that is not served passes on, and says which constraint', async () => {
    const result = await tick(served(ALL_BUT_PET), [{ op: 'delete', table: 'owner', row: [1] }]);
    expect(result.get('toy')).toEqual([{ op: 'truncate' }]);
    expect(result.fetched).toEqual([{ table: 'toy', keys: null }]);
    expect(result.foreignKeyReReads).toEqual(new Map([['pet_owner', new Set(['toy'])]]));
  });

  it('derives the actions of an unserved parent from its own change images', async () => {
    const schema = served(ALL_BUT_PET);
    const graph = new ForeignKeyGraph(schema);
    expect(graph.unservedParents().map((p) => p.table)).toEqual(['pet']);
    const result = await tick(schema, [{ op: 'delete', table: 'pet', row: [1, 1] }]);
    expect(result.get('toy')).toEqual([{ op: 'delete', row: [1, 1] }]);
  });

  it('re-reads children served with a where by key, or whole when the key is in the where', async () => {
    const deleted = await tick(served(ALL_BUT_PET), [{ op: 'delete', table: 'shelf', row: [1] }]);
    expect(deleted.fetched).toEqual([{ table: 'book', keys: [[1]] }]);
    expect(deleted.get('book')).toEqual([{ op: 'delete', row: [1, null, null] }]);
    const nulled = await tick(served(ALL_BUT_PET), [
      { op: 'update', table: 'shelf', before: [2], after: [3] },
    ]);
    expect(nulled.fetched).toEqual([{ table: 'book', keys: [[2]] }]);
    const keyed = served({
      tables: [
        { name: 'shelf' },
        { name: 'book', where: 'shelf_id > 1', where_columns: ['shelf_id'] },
      ],
    });
    const whole = await tick(keyed, [{ op: 'update', table: 'shelf', before: [2], after: [3] }]);
    expect(whole.fetched).toEqual([{ table: 'book', keys: null }]);
  });

  it('re-reads the children of SET DEFAULT by key: the default is the source’s to say', async () => {
    const result = await tick(served({}), [{ op: 'delete', table: 'edition', row: [7, 1] }]);
    expect(result.fetched).toEqual([{ table: 'copy', keys: [[1]] }]);
    expect(result.foreignKeyReReads).toEqual(new Map([['copy_edition', new Set(['copy'])]]));
  });

  it('re-reads a child whose key columns are not served', async () => {
    const schema = served({
      tables: [{ name: 'country' }, { name: 'city', columns: { exclude: ['country_id'] } }],
    });
    const result = await tick(schema, [{ op: 'delete', table: 'country', row: [2, 'b'] }]);
    expect(result.fetched).toEqual([{ table: 'city', keys: null }]);
  });

  it('derives nothing without the graph (a stream that carries the actions)', async () => {
    const schema = served({});
    const result = await mapChanges(
      schema,
      [{ op: 'delete', table: 'country', row: [1, 'a'] }],
      async () => [],
      () => false,
    );
    expect([...result.changes.keys()]).toEqual(['country']);
  });
});
