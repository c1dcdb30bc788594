import { type Key, KeyTable, type SharedKeyTable } from './key-table.ts';

export type { Key } from './key-table.ts';

/** Keys removed from the overlay are marked with this value. */
const REMOVED = null;

type Entry = number | readonly number[];

type Layer = ReadonlyMap<Key, Entry | typeof REMOVED>;

/**
 * A `KeyIndex` as structured-cloneable data: the base's arrays are shared memory, the small
 * layers are copied.
 */
export interface SharedKeyIndex {
  readonly columns: readonly number[];
  readonly unique: boolean;
  readonly base: SharedKeyTable;
  readonly layers: readonly Layer[];
}

/** Layers stacked on the base before they are merged into one. */
const MAX_LAYERS = 8;

/** Bytes a layer entry is estimated at (a Map entry and its array). */
const LAYER_ENTRY_BYTES = 48;

/**
 * A hash index from key to row id (unique) or row ids (not unique). Immutable: `withChanges`
 * returns a new index that shares the big base table and the layers of earlier changes and
 * adds one small layer of its own, so a generation after a few changes costs what the changes
 * cost, not the table's size. Every few generations the layers merge into one, and that one
 * folds into a new base when it grows past a sixteenth of the base: layers are JS maps that
 * each thread copies, the base is shared memory (see key-table.ts).
 */
export class KeyIndex {
  readonly columns: readonly number[];
  readonly unique: boolean;
  readonly #base: KeyTable;
  /** Newest first; each maps a key to its entry then, or REMOVED. */
  readonly #layers: readonly Layer[];

  constructor(
    columns: readonly number[],
    unique: boolean,
    base: KeyTable,
    layers: readonly Layer[] = [],
  ) {
    this.columns = columns;
    this.unique = unique;
    this.#base = base;
    this.#layers = layers;
  }

  /** This index in a form `postMessage` carries to another thread (see shared-generation.ts). */
  toShared(): SharedKeyIndex {
    return {
      columns: this.columns,
      unique: this.unique,
      base: this.#base.toShared(),
      layers: this.#layers,
    };
  }

  /** The index `toShared` described, on the receiving thread. */
  static fromShared(shared: SharedKeyIndex): KeyIndex {
    return new KeyIndex(shared.columns, shared.unique, new KeyTable(shared.base), shared.layers);
  }

  get size(): number {
    let size = this.#base.size;
    for (const layer of this.#layers) size += layer.size;
    return size;
  }

  /** Bytes held: the base's shared arrays, and the layers estimated. */
  get byteSize(): number {
    let bytes = this.#base.byteSize;
    for (const layer of this.#layers) bytes += layer.size * LAYER_ENTRY_BYTES;
    return bytes;
  }

  /** The layers' entry for `key`: undefined when no layer has it, REMOVED when removed. */
  #layered(key: Key): Entry | typeof REMOVED | undefined {
    for (const layer of this.#layers) {
      const entry = layer.get(key);
      if (entry !== undefined) return entry;
    }
    return undefined;
  }

  /** The first (for a unique index, the only) row with this key. */
  first(key: Key): number | undefined {
    if (this.#layers.length > 0) {
      const entry = this.#layered(key);
      if (entry === REMOVED) return undefined;
      if (entry !== undefined) return typeof entry === 'number' ? entry : entry[0];
    }
    const value = this.#base.find(key);
    return value === 0 ? undefined : this.#base.firstOf(value);
  }

  /** Every row with this key, in row-id order. */
  all(key: Key): readonly number[] {
    if (this.#layers.length > 0) {
      const entry = this.#layered(key);
      if (entry === REMOVED) return [];
      if (entry !== undefined) return typeof entry === 'number' ? [entry] : entry;
    }
    const value = this.#base.find(key);
    return value === 0 ? [] : this.#base.rowsOf(value);
  }

  /** Calls `visit` with every row with this key, in row-id order: `all` without an array. */
  forEachRow(key: Key, visit: (rowId: number) => void): void {
    if (this.#layers.length > 0) {
      const entry = this.#layered(key);
      if (entry === REMOVED) return;
      if (entry !== undefined) {
        if (typeof entry === 'number') visit(entry);
        else for (const rowId of entry) visit(rowId);
        return;
      }
    }
    const value = this.#base.find(key);
    if (value !== 0) this.#base.visitRows(value, visit);
  }

  /**
   * A new index with rows removed and added. `removed` and `added` pair keys with row ids.
   */
  withChanges(
    removed: ReadonlyArray<[Key, number]>,
    added: ReadonlyArray<[Key, number]>,
  ): KeyIndex {
    const touched = new Map<Key, number[]>();
    const current = (key: Key): number[] => {
      let rows = touched.get(key);
      if (!rows) {
        rows = [...this.all(key)];
        touched.set(key, rows);
      }
      return rows;
    };
    for (const [key, rowId] of removed) {
      const rows = current(key);
      const at = rows.indexOf(rowId);
      if (at >= 0) rows.splice(at, 1);
    }
    for (const [key, rowId] of added) current(key).push(rowId);
    const layer = new Map<Key, Entry | typeof REMOVED>();
    for (const [key, rows] of touched) {
      if (rows.length === 0) layer.set(key, REMOVED);
      else if (this.unique) layer.set(key, rows[rows.length - 1] as number);
      else
        layer.set(
          key,
          rows.sort((a, b) => a - b),
        );
    }
    const layers = [layer, ...this.#layers];
    if (layers.length <= MAX_LAYERS)
      return new KeyIndex(this.columns, this.unique, this.#base, layers);
    // Merge the layers, oldest first so that newer entries win.
    const merged = new Map<Key, Entry | typeof REMOVED>();
    for (let i = layers.length - 1; i >= 0; i--)
      for (const [key, entry] of layers[i] as Layer) merged.set(key, entry);
    if (merged.size * 16 <= Math.max(4096, this.#base.size)) {
      return new KeyIndex(this.columns, this.unique, this.#base, [merged]);
    }
    return this.#folded(merged);
  }

  /** A new base: the current one with `merged` applied. */
  #folded(merged: Layer): KeyIndex {
    const keys: Key[] = [];
    const rows: number[] = [];
    const add = (key: Key, entry: Entry) => {
      if (typeof entry === 'number') {
        keys.push(key);
        rows.push(entry);
      } else
        for (const row of entry) {
          keys.push(key);
          rows.push(row);
        }
    };
    this.#base.forEach((key, baseRows) => {
      if (!merged.has(key)) add(key, baseRows);
    });
    for (const [key, entry] of merged) if (entry !== REMOVED) add(key, entry);
    return new KeyIndex(this.columns, this.unique, KeyTable.build(keys, rows, this.unique));
  }

  /** Builds an index from (key, row id) pairs given in row-id order. */
  static build(
    columns: readonly number[],
    unique: boolean,
    each: (add: (key: Key, rowId: number) => void) => void,
  ): KeyIndex {
    const keys: Key[] = [];
    const rows: number[] = [];
    each((key, rowId) => {
      keys.push(key);
      rows.push(rowId);
    });
    return new KeyIndex(columns, unique, KeyTable.build(keys, rows, unique));
  }
}
