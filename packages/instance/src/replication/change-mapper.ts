import {
  type CompiledSchema,
  type CompiledTable,
  canonicalToComparable,
  type Generation,
  type RowChange,
} from '@replix/engine';
import type { SourceChange } from '@replix/sources';
import { ForeignKeyActions } from './foreign-key-actions.ts';
import type { ForeignKeyGraph } from './foreign-key-graph.ts';
import { recheckRows, type StreamImage } from './recheck-rows.ts';
import { TickRows } from './tick-rows.ts';

/**
 * Reads the current rows of `table` that satisfy its `where` predicate, either those with the
 * given primary-key values (`keys`, in primary-key column order) or, with `keys` null, all of
 * them. The predicate is the source's SQL, so the source evaluates it. With `flagWhere`, every
 * row with those keys comes, with one more value: 1 when it satisfies the predicate, else 0.
 */
export type RowFetcher = (
  table: CompiledTable,
  keys: readonly (readonly unknown[])[] | null,
  options?: { readonly flagWhere?: boolean },
) => Promise<unknown[][]>;

export interface MappedChanges {
  /** By API table name, in stored column order, ready for the engine. */
  readonly changes: Map<string, RowChange[]>;
  /** Tables whose columns changed at the source; their changes are left out. */
  readonly schemaChanges: readonly { readonly table: string; readonly detail: string }[];
  /** Constraint name → API names of the tables its action made this tick re-read. */
  readonly foreignKeyReReads: ReadonlyMap<string, ReadonlySet<string>>;
  /** Re-read rows the source first showed older than its change stream (see `recheckRows`). */
  readonly staleReads: number;
}

/** For sources whose change stream leaves out what foreign-key actions change (MySQL). */
export interface ForeignKeyActionOptions {
  readonly graph: ForeignKeyGraph;
  /** The generation served when the tick started. */
  readonly generation: Generation | null;
}

/** A primary key's values as one string, equal for equal keys whatever their source form. */
function keyId(table: CompiledTable, key: readonly unknown[]): string {
  return JSON.stringify(
    key.map((value, i) =>
      canonicalToComparable(table.columns[table.primaryKey[i] as number]!.type, value)?.toString(),
    ),
  );
}

function sameValue(
  type: CompiledTable['columns'][number]['type'],
  a: unknown,
  b: unknown,
): boolean {
  return canonicalToComparable(type, a) === canonicalToComparable(type, b);
}

/**
 * Turns a tick's source changes into engine row changes. Tables without a `where` take the
 * row images as they are. For a table with a `where`, an insert or update may move the row
 * into or out of the predicate, so the row is re-read from the source by primary key with the
 * predicate's result (one query per table per tick, read again while the source shows it older
 * than the stream did: `recheckRows`) and replaced or removed accordingly; an update that
 * changed none of the `where_columns` of a row already served skips that re-check. A filtered
 * table without a primary key is re-read whole when it changes.
 *
 * With `foreignKeys`, the effects of the source's foreign-key actions are added right after
 * each parent change (see `ForeignKeyActions`).
 */
export async function mapChanges(
  schema: CompiledSchema,
  sourceChanges: readonly SourceChange[],
  fetchRows: RowFetcher,
  isServed: (table: CompiledTable, row: readonly unknown[]) => boolean,
  foreignKeys?: ForeignKeyActionOptions,
): Promise<MappedChanges> {
  const bySource = new Map(schema.tables.map((table) => [table.sourceName, table]));
  const changes = new Map<string, RowChange[]>();
  const recheck = new Map<CompiledTable, Map<string, unknown[]>>();
  // What the stream last said of each row of a filtered table, by key id.
  const images = new Map<CompiledTable, Map<string, StreamImage>>();
  const refresh = new Set<CompiledTable>();
  const schemaChanges: { table: string; detail: string }[] = [];
  const tickRows = foreignKeys ? new TickRows(foreignKeys.generation) : null;
  const push = (table: CompiledTable, change: RowChange) => {
    const list = changes.get(table.name) ?? [];
    if (list.length === 0) changes.set(table.name, list);
    list.push(change);
    tickRows?.record(table, change);
  };
  const keyOf = (table: CompiledTable, row: readonly unknown[]) =>
    table.primaryKey.map((c) => row[c]);
  const markRecheck = (table: CompiledTable, row: readonly unknown[]) => {
    const key = keyOf(table, row);
    const keys = recheck.get(table) ?? new Map<string, unknown[]>();
    recheck.set(table, keys);
    keys.set(keyId(table, key), key);
  };
  const imagesOf = (table: CompiledTable) => {
    let byKey = images.get(table);
    if (!byKey) {
      byKey = new Map();
      images.set(table, byKey);
    }
    return byKey;
  };
  /** Records the stream's image of a row (unsent values kept from its previous image). */
  const record = (table: CompiledTable, key: readonly unknown[], image: StreamImage) => {
    const byKey = imagesOf(table);
    const id = keyId(table, key);
    const previous = byKey.get(id);
    byKey.set(
      id,
      image && previous && image.includes(undefined)
        ? image.map((value, c) => (value === undefined ? previous[c] : value))
        : image,
    );
  };
  const actions =
    foreignKeys && tickRows && !foreignKeys.graph.empty
      ? new ForeignKeyActions(foreignKeys.graph, tickRows, {
          push,
          recheck: (table, row) => {
            // The action's effect is not in the stream: the read is taken as it comes.
            imagesOf(table).set(keyId(table, keyOf(table, row)), undefined);
            markRecheck(table, row);
          },
          refresh: (table) => refresh.add(table),
        })
      : null;

  for (const change of sourceChanges) {
    const table = bySource.get(change.table);
    if (table) mapOne(table, change);
    actions?.afterChange(change);
  }

  function mapOne(table: CompiledTable, change: SourceChange): void {
    if (change.op === 'schemaChange') {
      schemaChanges.push({ table: table.name, detail: change.detail });
      return;
    }
    if (!table.where) {
      push(
        table,
        change.op === 'truncate'
          ? { op: 'truncate' }
          : change.op === 'update'
            ? { op: 'update', before: change.before, after: change.after }
            : { op: change.op, row: change.row },
      );
      return;
    }
    if (table.primaryKey.length === 0) {
      refresh.add(table);
      return;
    }
    switch (change.op) {
      case 'truncate':
        push(table, { op: 'truncate' });
        imagesOf(table).clear();
        break;
      case 'delete':
        push(table, { op: 'delete', row: change.row });
        record(table, keyOf(table, change.row), null);
        break;
      case 'insert':
        record(table, keyOf(table, change.row), change.row);
        markRecheck(table, change.row);
        break;
      case 'update': {
        const before = change.before ?? change.after;
        const keyChanged = table.primaryKey.some(
          (c) => !sameValue(table.columns[c]!.type, before[c], change.after[c]),
        );
        if (keyChanged) {
          push(table, { op: 'delete', row: before });
          record(table, keyOf(table, before), null);
        }
        record(table, keyOf(table, change.after), change.after);
        const whereColumns = table.whereColumns;
        const untouched =
          !keyChanged &&
          change.before !== null &&
          whereColumns?.every((name) => {
            const column = table.columns.find((c) => c.sourceName === name);
            return (
              column !== undefined &&
              change.before?.[column.index] !== undefined &&
              sameValue(column.type, change.before[column.index], change.after[column.index])
            );
          });
        if (untouched && !change.after.includes(undefined)) {
          // Membership did not change: a served row stays served, an unserved one stays out.
          if (isServed(table, before))
            push(table, { op: 'update', before: change.before, after: change.after });
        } else markRecheck(table, change.after);
        break;
      }
    }
  }

  let staleReads = 0;
  for (const [table, keys] of recheck) {
    const byKey = imagesOf(table);
    const rechecked = await recheckRows(
      table,
      new Map([...keys].map(([id, key]) => [id, { key, image: byKey.get(id) }])),
      (key) => keyId(table, key),
      (table, keys) => fetchRows(table, keys, { flagWhere: true }),
    );
    staleReads += rechecked.staleReads;
    for (const row of rechecked.served) push(table, { op: 'insert', row });
    for (const key of rechecked.unserved) {
      const row: unknown[] = new Array(table.columns.length).fill(null);
      table.primaryKey.forEach((c, i) => {
        row[c] = key[i];
      });
      push(table, { op: 'delete', row });
    }
  }
  for (const table of refresh) {
    const rows = await fetchRows(table, null);
    changes.set(table.name, [
      { op: 'truncate' },
      ...rows.map((row): RowChange => ({ op: 'insert', row })),
    ]);
  }
  return {
    changes,
    schemaChanges,
    foreignKeyReReads: actions?.reReads ?? new Map(),
    staleReads,
  };
}
