import type { CompiledTable } from '../schema/compiled-schema.ts';
import { bitmapBytes, getBit, setBit } from './bitmap.ts';
import { ColumnBuilder } from './column-builder.ts';
import type { ColumnChunk } from './column-chunk.ts';
import { readCanonical, readComparable } from './column-reader.ts';
import { canonicalToComparable } from './comparable.ts';
import type { TableSnapshot } from './generation.ts';
import { indexName } from './generation.ts';
import type { IndexSpec } from './index-plan.ts';
import type { Key, KeyIndex } from './key-index.ts';
import { replaceColumnValues } from './replace-rows.ts';
import { rowKey, valuesKey } from './row-key.ts';
import { sharedArray, sharedCopy } from './shared-arrays.ts';
import {
  CHUNK_BITS,
  CHUNK_ROWS,
  type Chunk,
  isLive,
  OFFSET_MASK,
  type TableData,
} from './table-data.ts';
import { buildIndexes, TableLoader } from './table-loader.ts';

/**
 * One row change from the source, rows in stored column order with canonical values. An
 * update's `before` needs only the primary-key columns (null: the key did not change), and an
 * `undefined` in `after` keeps the column's old value (a value the source did not resend).
 */
export type RowChange =
  | { readonly op: 'insert'; readonly row: readonly unknown[] }
  | {
      readonly op: 'update';
      readonly before: readonly unknown[] | null;
      readonly after: readonly unknown[];
    }
  | { readonly op: 'delete'; readonly row: readonly unknown[] }
  | { readonly op: 'truncate' };

/** A chunk shorter than this is always rewritten in place: copying it costs little. */
const IN_PLACE_SMALL_CHUNK = 4096;
/**
 * What an update as a tombstone and an appended row costs, in bytes of chunk copy it is worth:
 * the row's appending and index entries, and its share of the compaction it brings closer.
 */
const TOMBSTONE_BYTES = 16 * 1024;

/** A tail chunk shorter than this is rebuilt with the new rows instead of starting another. */
const TAIL_MERGE_ROWS = 8192;

function pkKey(table: CompiledTable, row: readonly unknown[]): Key | null {
  return valuesKey(
    table.primaryKey.map((c) => canonicalToComparable(table.columns[c]!.type, row[c])),
  );
}

function sameRow(table: CompiledTable, a: readonly unknown[], b: readonly unknown[]): boolean {
  return table.columns.every(
    (column, c) =>
      canonicalToComparable(column.type, a[c]) === canonicalToComparable(column.type, b[c]),
  );
}

function readRow(table: CompiledTable, chunk: Chunk, offset: number): unknown[] {
  return table.columns.map((column, c) =>
    readCanonical(chunk.columns[c]!, column.type, column.scale, offset),
  );
}

/** Finds the live stored row equal to `row` (by primary key when the table has one). */
function locate(
  snapshot: TableSnapshot,
  row: readonly unknown[],
  removed: ReadonlySet<number>,
): number | undefined {
  const table = snapshot.schema;
  if (table.primaryKey.length > 0) {
    const key = pkKey(table, row);
    const pk = snapshot.indexes.get(indexName(table.primaryKey));
    if (key === null || !pk) return undefined;
    const rowId = pk.first(key);
    return rowId === undefined || removed.has(rowId) ? undefined : rowId;
  }
  const chunks = snapshot.data.chunks;
  for (let c = 0; c < chunks.length; c++) {
    const chunk = chunks[c] as Chunk;
    for (let offset = 0; offset < chunk.length; offset++) {
      const rowId = (c << CHUNK_BITS) + offset;
      if (!isLive(chunk, offset) || removed.has(rowId)) continue;
      if (sameRow(table, readRow(table, chunk, offset), row)) return rowId;
    }
  }
  return undefined;
}

/**
 * Applies changes to one table copy-on-write: deleted rows get a bit in a copied bitmap of
 * their chunk, new and updated rows are appended at the tail, and only the touched index
 * entries change. Untouched chunks are shared with `snapshot`. Rebuilds the table when more
 * than a quarter of its stored rows are dead.
 */
export function applyChanges(
  snapshot: TableSnapshot,
  changes: readonly RowChange[],
  specs: readonly IndexSpec[],
): TableSnapshot {
  const table = snapshot.schema;
  const hasKey = table.primaryKey.length > 0;
  const removed = new Set<number>();
  // New row versions, by primary key (or in arrival order for tables without one).
  const pendingByKey = new Map<Key, readonly unknown[]>();
  let pendingList: (readonly unknown[])[] = [];
  let truncated = false;
  // Stored rows updated with their key unchanged: rewritten where they are, by row id.
  const inPlace = new Map<number, readonly unknown[]>();

  const removeRow = (row: readonly unknown[]) => {
    if (hasKey) {
      const key = pkKey(table, row);
      if (key !== null && pendingByKey.delete(key)) return;
    } else {
      const at = pendingList.findIndex((pending) => sameRow(table, pending, row));
      if (at >= 0) {
        pendingList.splice(at, 1);
        return;
      }
    }
    const rowId = truncated ? undefined : locate(snapshot, row, removed);
    if (rowId !== undefined) {
      removed.add(rowId);
      inPlace.delete(rowId);
    }
  };
  /** The current version of the row `before` names: pending in this batch, or stored. */
  const currentRow = (before: readonly unknown[]): readonly unknown[] | undefined => {
    if (hasKey) {
      const key = pkKey(table, before);
      const pending = key === null ? undefined : pendingByKey.get(key);
      if (pending) return pending;
    }
    const rowId = truncated ? undefined : locate(snapshot, before, removed);
    if (rowId === undefined) return undefined;
    const updated = inPlace.get(rowId);
    if (updated) return updated;
    return readRow(table, snapshot.data.chunks[rowId >>> CHUNK_BITS] as Chunk, rowId & OFFSET_MASK);
  };
  const withOldValues = (before: readonly unknown[], after: readonly unknown[]): unknown[] => {
    const old = currentRow(before);
    return after.map((value, c) => (value === undefined ? (old?.[c] ?? null) : value));
  };
  const addRow = (row: readonly unknown[]) => {
    if (!hasKey) {
      pendingList.push(row);
      return;
    }
    const key = pkKey(table, row);
    if (key === null) return;
    // An insert over an existing key replaces it (the source never has two).
    pendingByKey.delete(key);
    removeRow(row);
    pendingByKey.set(key, row);
  };

  for (const change of changes) {
    switch (change.op) {
      case 'insert':
        addRow(change.row);
        break;
      case 'update': {
        const before = change.before ?? change.after;
        const after = change.after.includes(undefined)
          ? withOldValues(before, change.after)
          : change.after;
        // An update that keeps the key rewrites the row where it is: a pending row in place
        // in this batch, a stored one in a copy of its chunk.
        const key = hasKey ? pkKey(table, before) : null;
        if (key !== null && key === pkKey(table, after)) {
          if (pendingByKey.has(key)) {
            pendingByKey.set(key, after);
            break;
          }
          const rowId = truncated ? undefined : locate(snapshot, before, removed);
          if (rowId !== undefined) {
            inPlace.set(rowId, after);
            break;
          }
        }
        removeRow(before);
        addRow(after);
        break;
      }
      case 'delete':
        removeRow(change.row);
        break;
      case 'truncate':
        truncated = true;
        removed.clear();
        inPlace.clear();
        pendingByKey.clear();
        pendingList = [];
        break;
    }
  }
  const appended: (readonly unknown[])[] = hasKey ? [...pendingByKey.values()] : [...pendingList];
  if (truncated) return rebuild(table, [], specs, appended);
  // Rewriting costs a copy of each changed column of the chunk; a few scattered updates that
  // change many columns of a big chunk are cheaper as tombstones and appended rows.
  const plans = planRewrites(table, snapshot.data.chunks, inPlace);
  for (const [c, plan] of plans) {
    const length = (snapshot.data.chunks[c] as Chunk).length;
    if (length < IN_PLACE_SMALL_CHUNK || Number.isFinite(plan.copyBytes)) continue;
    plans.delete(c);
    for (const [offset, row] of plan.rows) {
      removed.add((c << CHUNK_BITS) + offset);
      appended.push(row);
    }
  }

  const chunks = [...snapshot.data.chunks];
  const deletedCopies = new Map<number, Uint8Array>();
  const removedPairs = new Map<string, [Key, number][]>();
  const addedPairs = new Map<string, [Key, number][]>();
  const pair = (pairs: Map<string, [Key, number][]>, name: string, key: Key, rowId: number) => {
    const list = pairs.get(name) ?? [];
    list.push([key, rowId]);
    pairs.set(name, list);
  };
  rewriteInPlace(table, chunks, plans, specs, (name, oldKey, newKey, rowId) => {
    if (oldKey !== null) pair(removedPairs, name, oldKey, rowId);
    if (newKey !== null) pair(addedPairs, name, newKey, rowId);
  });
  for (const rowId of removed) {
    const c = rowId >>> CHUNK_BITS;
    const offset = rowId & OFFSET_MASK;
    const chunk = chunks[c] as Chunk;
    let bits = deletedCopies.get(c);
    if (!bits) {
      bits = chunk.deleted
        ? sharedCopy(chunk.deleted)
        : sharedArray(Uint8Array, bitmapBytes(chunk.length));
      deletedCopies.set(c, bits);
    }
    setBit(bits, offset);
    for (const spec of specs) {
      const key = rowKey(chunk.columns, spec.columns, offset);
      if (key === null) continue;
      const name = indexName(spec.columns);
      const pairs = removedPairs.get(name) ?? [];
      pairs.push([key, rowId]);
      removedPairs.set(name, pairs);
    }
  }
  let deadRows = 0;
  let storedRows = 0;
  chunks.forEach((chunk, c) => {
    const bits = deletedCopies.get(c);
    if (bits) {
      let count = 0;
      for (let i = 0; i < chunk.length; i++) if (getBit(bits, i)) count++;
      chunks[c] = { ...chunk, deleted: bits, deletedCount: count };
    }
    deadRows += (chunks[c] as Chunk).deletedCount;
    storedRows += chunk.length;
  });
  const liveRows = snapshot.data.liveRows - removed.size + appended.length;

  if (deadRows * 4 > storedRows + appended.length && storedRows > 1024) {
    return rebuild(table, liveRowsOf(table, chunks), specs, appended);
  }

  appendRows(table, chunks, appended, (chunk, offset, rowId) => {
    for (const spec of specs) {
      const key = rowKey(chunk.columns, spec.columns, offset);
      if (key === null) continue;
      const name = indexName(spec.columns);
      const pairs = addedPairs.get(name) ?? [];
      pairs.push([key, rowId]);
      addedPairs.set(name, pairs);
    }
  });

  const indexes = new Map<string, KeyIndex>();
  for (const [name, index] of snapshot.indexes) {
    const gone = removedPairs.get(name) ?? [];
    const added = addedPairs.get(name) ?? [];
    indexes.set(name, gone.length || added.length ? index.withChanges(gone, added) : index);
  }
  return { schema: table, data: { chunks, liveRows }, indexes };
}

/** The updates of one chunk: rows by offset, and each column's changed values (none: shared). */
interface RewritePlan {
  readonly rows: Map<number, readonly unknown[]>;
  readonly changed: readonly (ReadonlyMap<number, unknown> | null)[];
  /** Bytes of the column chunks that would be copied. */
  readonly copyBytes: number;
}

/** Bytes a rewrite of the column chunk copies (its arrays; dictionaries are shared or small). */
function copyCost(chunk: ColumnChunk): number {
  switch (chunk.kind) {
    case 'dict':
      return chunk.codes.byteLength;
    case 'bytes':
      return chunk.bytes.byteLength + chunk.offsets.byteLength;
    default:
      return chunk.values.byteLength;
  }
}

/** Groups in-place updates by chunk and finds, per column, the values that really change. */
function planRewrites(
  table: CompiledTable,
  chunks: readonly Chunk[],
  updates: ReadonlyMap<number, readonly unknown[]>,
): Map<number, RewritePlan> {
  const byChunk = new Map<number, Map<number, readonly unknown[]>>();
  for (const [rowId, row] of updates) {
    const c = rowId >>> CHUNK_BITS;
    const rows = byChunk.get(c) ?? new Map<number, readonly unknown[]>();
    rows.set(rowId & OFFSET_MASK, row);
    byChunk.set(c, rows);
  }
  const plans = new Map<number, RewritePlan>();
  for (const [c, rows] of byChunk) {
    const old = chunks[c] as Chunk;
    // A rewrite worth more than tombstones is not planned further: those rows are appended.
    const budget =
      old.length < IN_PLACE_SMALL_CHUNK ? Number.POSITIVE_INFINITY : rows.size * TOMBSTONE_BYTES;
    let copyBytes = 0;
    const changed: (Map<number, unknown> | null)[] = [];
    for (let i = 0; i < table.columns.length && copyBytes <= budget; i++) {
      const column = table.columns[i]!;
      const current = old.columns[i]!;
      const values = new Map<number, unknown>();
      for (const [offset, row] of rows) {
        const value = row[i];
        // DECIMAL digits a double cannot hold are compared as the exact text.
        const same =
          column.type === 'decimal' || column.type === 'bigint'
            ? (value === null ? null : String(value)) ===
              readCanonical(current, column.type, column.scale, offset)
            : canonicalToComparable(column.type, value) === readComparable(current, offset);
        if (!same) values.set(offset, value);
      }
      if (values.size > 0) copyBytes += copyCost(current);
      changed.push(values.size > 0 ? values : null);
    }
    plans.set(c, {
      rows,
      changed,
      copyBytes: copyBytes > budget ? Number.POSITIVE_INFINITY : copyBytes,
    });
  }
  return plans;
}

/**
 * Rewrites planned rows inside copies of their chunks (only the columns that change; the
 * others stay shared), and reports each index key that changed (never the primary key's).
 */
function rewriteInPlace(
  table: CompiledTable,
  chunks: Chunk[],
  plans: ReadonlyMap<number, RewritePlan>,
  specs: readonly IndexSpec[],
  keyChanged: (index: string, oldKey: Key | null, newKey: Key | null, rowId: number) => void,
): void {
  const primary = indexName(table.primaryKey);
  for (const [c, plan] of plans) {
    const old = chunks[c] as Chunk;
    const columns = table.columns.map((column, i) => {
      const values = plan.changed[i];
      const current = old.columns[i]!;
      return values ? replaceColumnValues(current, column, old.length, values) : current;
    });
    for (const spec of specs) {
      const name = indexName(spec.columns);
      if (name === primary) continue;
      for (const offset of plan.rows.keys()) {
        const oldKey = rowKey(old.columns, spec.columns, offset);
        const newKey = rowKey(columns, spec.columns, offset);
        if (oldKey !== newKey) keyChanged(name, oldKey, newKey, (c << CHUNK_BITS) + offset);
      }
    }
    chunks[c] = { ...old, columns };
  }
}

function liveRowsOf(table: CompiledTable, chunks: readonly Chunk[]): unknown[][] {
  const rows: unknown[][] = [];
  for (const chunk of chunks) {
    for (let offset = 0; offset < chunk.length; offset++) {
      if (isLive(chunk, offset)) rows.push(readRow(table, chunk, offset));
    }
  }
  return rows;
}

function rebuild(
  table: CompiledTable,
  rows: readonly (readonly unknown[])[],
  specs: readonly IndexSpec[],
  appended: readonly (readonly unknown[])[],
): TableSnapshot {
  const loader = new TableLoader(table);
  loader.appendRows(rows);
  loader.appendRows(appended);
  const data: TableData = loader.finish();
  return { schema: table, data, indexes: buildIndexes(data, specs) };
}

/**
 * Appends rows after the last chunk: a short tail chunk is rebuilt with them (its offsets
 * unchanged), otherwise they start new chunks. Calls `added` for each new row.
 */
function appendRows(
  table: CompiledTable,
  chunks: Chunk[],
  rows: readonly (readonly unknown[])[],
  added: (chunk: Chunk, offset: number, rowId: number) => void,
): void {
  let next = 0;
  while (next < rows.length) {
    const lastIndex = chunks.length - 1;
    const last = chunks[lastIndex];
    const extend = last !== undefined && last.length < TAIL_MERGE_ROWS;
    const base = extend ? last : undefined;
    const capacity = extend ? TAIL_MERGE_ROWS - last.length : TAIL_MERGE_ROWS;
    const take = Math.min(capacity, rows.length - next, CHUNK_ROWS);
    const builders = table.columns.map((column) => new ColumnBuilder(column.type, column.scale));
    const startOffset = base ? base.length : 0;
    if (base) {
      for (let offset = 0; offset < base.length; offset++) {
        table.columns.forEach((column, c) => {
          builders[c]!.append(readCanonical(base.columns[c]!, column.type, column.scale, offset));
        });
      }
    }
    for (let r = next; r < next + take; r++) {
      const row = rows[r] as readonly unknown[];
      builders.forEach((builder, c) => {
        builder.append(row[c]);
      });
    }
    const length = startOffset + take;
    let deleted: Uint8Array | null = null;
    if (base?.deleted) {
      deleted = sharedArray(Uint8Array, bitmapBytes(length));
      deleted.set(base.deleted);
    }
    const chunk: Chunk = {
      length,
      columns: builders.map((builder) => builder.finish()),
      deleted,
      deletedCount: base?.deletedCount ?? 0,
    };
    const chunkIndex = base ? lastIndex : chunks.length;
    chunks[chunkIndex] = chunk;
    for (let offset = startOffset; offset < length; offset++) {
      added(chunk, offset, (chunkIndex << CHUNK_BITS) + offset);
    }
    next += take;
  }
}
