import {
  type CompiledTable,
  canonicalToComparable,
  forEachRowKeyed,
  type Generation,
  type RowChange,
  rowsWithValues,
  valuesKey,
} from '@replix/engine';

type Key = NonNullable<ReturnType<typeof valuesKey>>;

interface TableOverlay {
  /** The table was truncated in this tick: the generation's rows are all gone. */
  truncated: boolean;
  /** Rows changed in this tick by primary key: the row now, or null once deleted. */
  readonly rows: Map<Key, readonly unknown[] | null>;
  /** Lookups over `rows` by column list, built on first use and kept up to date. */
  readonly byColumns: Map<string, { columns: readonly number[]; keys: Map<Key, Set<Key>> }>;
}

function keyOf(
  table: CompiledTable,
  columns: readonly number[],
  values: readonly unknown[],
): Key | null {
  return valuesKey(columns.map((c, i) => canonicalToComparable(table.columns[c]!.type, values[i])));
}

const pick = (row: readonly unknown[], columns: readonly number[]) => columns.map((c) => row[c]);

/**
 * The served rows of a tick in progress: the generation being served, overlaid with the row
 * changes of the tick so far, so that a foreign-key action finds the children a row inserted
 * earlier in the same tick and skips those already deleted. Tables with a primary key only.
 */
export class TickRows {
  readonly #generation: Generation | null;
  readonly #overlays = new Map<string, TableOverlay>();
  /** Generation rows by column values, for column lists no index covers (one scan a tick). */
  readonly #scans = new Map<string, Map<Key, unknown[][]>>();

  constructor(generation: Generation | null) {
    this.#generation = generation;
  }

  #overlay(table: CompiledTable): TableOverlay {
    let overlay = this.#overlays.get(table.name);
    if (!overlay) {
      overlay = { truncated: false, rows: new Map(), byColumns: new Map() };
      this.#overlays.set(table.name, overlay);
    }
    return overlay;
  }

  #set(table: CompiledTable, row: readonly unknown[], now: readonly unknown[] | null): void {
    const pk = keyOf(table, table.primaryKey, pick(row, table.primaryKey));
    if (pk === null) return;
    const overlay = this.#overlay(table);
    const before = overlay.rows.get(pk);
    for (const { columns, keys } of overlay.byColumns.values()) {
      if (before) {
        const key = keyOf(table, columns, pick(before, columns));
        if (key !== null) keys.get(key)?.delete(pk);
      }
      if (now) {
        const key = keyOf(table, columns, pick(now, columns));
        if (key !== null) keys.set(key, (keys.get(key) ?? new Set()).add(pk));
      }
    }
    overlay.rows.set(pk, now);
  }

  /** Takes one row change of the tick into account (rows in stored column order). */
  record(table: CompiledTable, change: RowChange): void {
    if (table.primaryKey.length === 0) return;
    switch (change.op) {
      case 'insert':
        this.#set(table, change.row, change.row);
        break;
      case 'delete':
        this.#set(table, change.row, null);
        break;
      case 'update': {
        const before = change.before ?? change.after;
        const after = change.after.map((value, c) => (value === undefined ? before[c] : value));
        this.#set(table, before, null);
        this.#set(table, after, after);
        break;
      }
      case 'truncate': {
        const overlay = this.#overlay(table);
        overlay.truncated = true;
        overlay.rows.clear();
        for (const index of overlay.byColumns.values()) index.keys.clear();
        break;
      }
    }
  }

  #generationRows(table: CompiledTable, columns: readonly number[], key: Key, values: unknown[]) {
    const generation = this.#generation;
    if (!generation?.tables.has(table.name)) return [];
    const indexed = rowsWithValues(generation, table.name, columns, values);
    if (indexed) return indexed;
    const scanName = `${table.name}\u0000${columns.join(',')}`;
    let scan = this.#scans.get(scanName);
    if (!scan) {
      const built = new Map<Key, unknown[][]>();
      forEachRowKeyed(generation, table.name, columns, (rowKey, row) => {
        if (rowKey === null) return;
        const list = built.get(rowKey);
        if (list) list.push(row);
        else built.set(rowKey, [row]);
      });
      this.#scans.set(scanName, built);
      scan = built;
    }
    return scan.get(key) ?? [];
  }

  /**
   * The rows of `table` whose `columns` (stored positions) hold `values` now, in this tick.
   * A NULL among `values` matches nothing, as in a foreign key.
   */
  find(
    table: CompiledTable,
    columns: readonly number[],
    values: readonly unknown[],
  ): (readonly unknown[])[] {
    const key = keyOf(table, columns, values);
    if (key === null) return [];
    const overlay = this.#overlays.get(table.name);
    const found: (readonly unknown[])[] = [];
    if (!overlay?.truncated) {
      for (const row of this.#generationRows(table, columns, key, [...values])) {
        const pk = keyOf(table, table.primaryKey, pick(row, table.primaryKey));
        if (pk === null || !overlay?.rows.has(pk)) found.push(row);
      }
    }
    if (!overlay) return found;
    const name = columns.join(',');
    let index = overlay.byColumns.get(name);
    if (!index) {
      index = { columns, keys: new Map() };
      for (const [pk, row] of overlay.rows) {
        const rowKey = row ? keyOf(table, columns, pick(row, columns)) : null;
        if (rowKey !== null) index.keys.set(rowKey, (index.keys.get(rowKey) ?? new Set()).add(pk));
      }
      overlay.byColumns.set(name, index);
    }
    for (const pk of index.keys.get(key) ?? []) {
      const row = overlay.rows.get(pk);
      if (row) found.push(row);
    }
    return found;
  }
}
