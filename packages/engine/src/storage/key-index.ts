/** An index key: the column's value, or for several columns their values joined. */
export type Key = number | bigint | string | boolean;

/** Keys removed from the overlay are marked with this value. */
const REMOVED = null;

type Entry = number | readonly number[];

type Layer = ReadonlyMap<Key, Entry | typeof REMOVED>;

/** A `KeyIndex` as structured-cloneable data. */
export interface SharedKeyIndex {
  readonly columns: readonly number[];
  readonly unique: boolean;
  readonly base: ReadonlyMap<Key, Entry>;
  readonly layers: readonly Layer[];
}

/** Layers stacked on the base before they are merged into one. */
const MAX_LAYERS = 8;

/**
 * A hash index from key to row id (unique) or row ids (not unique). Immutable: `withChanges`
 * returns a new index that shares the big base map and the layers of earlier changes and adds
 * one small layer of its own, so a generation after a few changes costs what the changes cost,
 * not the table's size. Every few generations the layers merge into one, and that one folds
 * into a new base when it grows past a quarter of the base.
 */
export class KeyIndex {
  readonly columns: readonly number[];
  readonly unique: boolean;
  readonly #base: ReadonlyMap<Key, Entry>;
  /** Newest first; each maps a key to its entry then, or REMOVED. */
  readonly #layers: readonly Layer[];

  constructor(
    columns: readonly number[],
    unique: boolean,
    base: ReadonlyMap<Key, Entry>,
    layers: readonly Layer[] = [],
  ) {
    this.columns = columns;
    this.unique = unique;
    this.#base = base;
    this.#layers = layers;
  }

  /** This index in a form `postMessage` carries to another thread (see shared-generation.ts). */
  toShared(): SharedKeyIndex {
    return { columns: this.columns, unique: this.unique, base: this.#base, layers: this.#layers };
  }

  /** The index `toShared` described, on the receiving thread. */
  static fromShared(shared: SharedKeyIndex): KeyIndex {
    return new KeyIndex(shared.columns, shared.unique, shared.base, shared.layers);
  }

  get size(): number {
    let size = this.#base.size;
    for (const layer of this.#layers) size += layer.size;
    return size;
  }

  #entry(key: Key): Entry | undefined {
    for (const layer of this.#layers) {
      const entry = layer.get(key);
      if (entry !== undefined) return entry === REMOVED ? undefined : entry;
    }
    return this.#base.get(key);
  }

  /** The first (for a unique index, the only) row with this key. */
  first(key: Key): number | undefined {
    const entry = this.#entry(key);
    if (entry === undefined || typeof entry === 'number') return entry;
    return entry[0];
  }

  /** Every row with this key, in row-id order. */
  all(key: Key): readonly number[] {
    const entry = this.#entry(key);
    if (entry === undefined) return [];
    return typeof entry === 'number' ? [entry] : entry;
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
    if (merged.size * 4 <= Math.max(4096, this.#base.size)) {
      return new KeyIndex(this.columns, this.unique, this.#base, [merged]);
    }
    const base = new Map(this.#base);
    for (const [key, entry] of merged) {
      if (entry === REMOVED) base.delete(key);
      else base.set(key, entry);
    }
    return new KeyIndex(this.columns, this.unique, base);
  }

  /** Builds an index from (key, row id) pairs given in row-id order. */
  static build(
    columns: readonly number[],
    unique: boolean,
    each: (add: (key: Key, rowId: number) => void) => void,
  ): KeyIndex {
    const base = new Map<Key, Entry>();
    if (unique) {
      each((key, rowId) => base.set(key, rowId));
    } else {
      each((key, rowId) => {
        const entry = base.get(key);
        if (entry === undefined) base.set(key, rowId);
        else if (typeof entry === 'number') base.set(key, [entry, rowId]);
        else (entry as number[]).push(rowId);
      });
    }
    return new KeyIndex(columns, unique, base);
  }
}
