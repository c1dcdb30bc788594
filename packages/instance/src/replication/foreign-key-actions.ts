import {
  type ColumnType,
  type CompiledTable,
  canonicalToComparable,
  type RowChange,
} from '@replix/engine';
import type { SourceChange } from '@replix/sources';
import {
  type ActionForeignKey,
  changesChildren,
  type ForeignKeyGraph,
} from './foreign-key-graph.ts';
import type { TickRows } from './tick-rows.ts';

/** Where the effects of foreign-key actions go: the tick's changes, re-reads by key or whole. */
export interface ForeignKeyActionSink {
  /** A derived change to a served table, applied in the tick (and seen by later lookups). */
  push(table: CompiledTable, change: RowChange): void;
  /** Re-read this served row from the source by primary key. */
  recheck(table: CompiledTable, row: readonly unknown[]): void;
  /** Re-read this served table whole from the source. */
  refresh(table: CompiledTable): void;
}

/** InnoDB nests cascades at most 15 deep; anything deeper is re-read, never guessed. */
const MAX_DEPTH = 15;

/** Where each column of a table's change images is, and its type. */
type Layout = ReadonlyMap<string, { readonly index: number; readonly type: ColumnType }>;

/** A row image read by source column name; `undefined` for a column the image lacks. */
interface Image {
  readonly layout: Layout;
  readonly row: readonly unknown[];
}

const columnValue = (image: Image, column: string): unknown => {
  const at = image.layout.get(column);
  return at === undefined ? undefined : image.row[at.index];
};

function sameValue(type: ColumnType | undefined, a: unknown, b: unknown): boolean {
  if (type === undefined) return a === b;
  return canonicalToComparable(type, a) === canonicalToComparable(type, b);
}

/** A parent's key value in the canonical form of the child's column (they may differ in type). */
function asType(type: ColumnType, value: unknown): unknown {
  if (value === null || value === undefined) return value;
  if (type === 'bigint' || type === 'decimal') return String(value);
  if ((type === 'int' || type === 'float') && typeof value === 'string') return Number(value);
  return value;
}

/**
 * Derives what a source's foreign-key actions did to served rows when its change stream does
 * not say (MySQL/MariaDB: InnoDB applies ON DELETE / ON UPDATE actions below the binary log).
 * For each parent delete, and each update that changes referenced columns, it finds the
 * children in the tick's served rows and deletes them (CASCADE), nulls their key (SET NULL)
 * or rewrites it (ON UPDATE CASCADE), then follows the children's own referencing keys, as
 * InnoDB does. Where that cannot be exact from served rows (a table on the way is not
 * served or served with a `where`, key columns are not served, SET DEFAULT), the affected
 * children are re-read from the source instead, and the constraint is noted in `reReads`.
 */
export class ForeignKeyActions {
  readonly #graph: ForeignKeyGraph;
  readonly #rows: TickRows;
  readonly #sink: ForeignKeyActionSink;
  readonly #layouts = new Map<string, Layout>();
  /** Constraint name → served tables re-read because of it, for one log line a tick. */
  readonly reReads = new Map<string, Set<string>>();

  constructor(graph: ForeignKeyGraph, rows: TickRows, sink: ForeignKeyActionSink) {
    this.#graph = graph;
    this.#rows = rows;
    this.#sink = sink;
  }

  #layout(table: string): Layout {
    let layout = this.#layouts.get(table);
    if (!layout) {
      const served = this.#graph.served(table);
      const columns = served
        ? served.columns.map((c) => ({ name: c.sourceName, type: c.type }))
        : (this.#graph.sourceColumns(table) ?? []);
      layout = new Map(columns.map((c, index) => [c.name, { index, type: c.type }]));
      this.#layouts.set(table, layout);
    }
    return layout;
  }

  /** Call after each source change of the tick, in order, once its own change is pushed. */
  afterChange(change: SourceChange): void {
    if (change.op !== 'delete' && change.op !== 'update') return;
    if (this.#graph.referencing(change.table).length === 0) return;
    const layout = this.#layout(change.table);
    if (change.op === 'delete') {
      this.#parentChanged(change.table, { layout, row: change.row }, null, 0);
      return;
    }
    const before = change.before ?? change.after;
    this.#parentChanged(change.table, { layout, row: before }, { layout, row: change.after }, 0);
  }

  #parentChanged(table: string, before: Image, after: Image | null, depth: number): void {
    for (const key of this.#graph.referencing(table)) {
      const rule = after ? key.onUpdate : key.onDelete;
      if (!changesChildren(rule)) continue;
      const old = key.referencedColumns.map((c) => columnValue(before, c));
      const now = after ? key.referencedColumns.map((c) => columnValue(after, c)) : null;
      if (
        now &&
        key.referencedColumns.every((c, i) => sameValue(before.layout.get(c)?.type, old[i], now[i]))
      )
        continue;
      // A key with a NULL in it is referenced by no row.
      if (old.some((value) => value === null)) continue;
      const child = this.#graph.served(key.table);
      const keyColumns = child
        ? key.columns.map((name) => child.columns.find((c) => c.sourceName === name)?.index ?? -1)
        : [];
      const unknown = old.includes(undefined) || (now?.includes(undefined) ?? false);
      if (!child || unknown || keyColumns.includes(-1) || child.primaryKey.length === 0) {
        this.#reReadWhole(key, child);
        continue;
      }
      const rows = this.#rows.find(child, keyColumns, old);
      if (rows.length === 0) continue;
      const deletes = after === null && rule === 'cascade';
      if (child.where || rule === 'set default' || depth >= MAX_DEPTH) {
        this.#reReadByKey(key, child, rows, deletes);
        continue;
      }
      for (const row of rows) {
        if (deletes) {
          this.#sink.push(child, { op: 'delete', row });
          this.#parentChanged(key.table, { layout: this.#layout(key.table), row }, null, depth + 1);
          continue;
        }
        const next = [...row];
        keyColumns.forEach((c, i) => {
          next[c] = rule === 'set null' ? null : asType(child.columns[c]!.type, now?.[i]);
        });
        this.#sink.push(child, { op: 'update', before: row, after: next });
        const layout = this.#layout(key.table);
        this.#parentChanged(key.table, { layout, row }, { layout, row: next }, depth + 1);
      }
    }
  }

  #note(key: ActionForeignKey, table: CompiledTable): void {
    const tables = this.reReads.get(key.name) ?? new Set<string>();
    tables.add(table.name);
    this.reReads.set(key.name, tables);
  }

  /** Re-reads the child whole (when served) and every served table the action may reach. */
  #reReadWhole(key: ActionForeignKey, child: CompiledTable | undefined): void {
    for (const table of child
      ? [child, ...this.#graph.servedDescendants(key.table)]
      : this.#graph.servedDescendants(key.table)) {
      this.#sink.refresh(table);
      this.#note(key, table);
    }
  }

  /**
   * Re-reads the served children found, by primary key. That is exact for the child when its
   * served set cannot gain rows from the action: a delete, a table without `where`, or a
   * `where` whose declared columns the key does not touch; otherwise the child is re-read
   * whole. What the action did further down is re-read whole too.
   */
  #reReadByKey(
    key: ActionForeignKey,
    child: CompiledTable,
    rows: readonly (readonly unknown[])[],
    deletes: boolean,
  ): void {
    const membershipKept =
      deletes ||
      !child.where ||
      (child.whereColumns !== undefined &&
        !child.whereColumns.some((c) => key.columns.includes(c)));
    if (!membershipKept) {
      this.#reReadWhole(key, child);
      return;
    }
    for (const row of rows) this.#sink.recheck(child, row);
    this.#note(key, child);
    for (const table of this.#graph.servedDescendants(key.table)) {
      this.#sink.refresh(table);
      this.#note(key, table);
    }
  }
}
