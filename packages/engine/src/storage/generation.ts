import type { CompiledSchema, CompiledTable } from '../schema/compiled-schema.ts';
import { chunkByteSize } from './column-chunk.ts';
import { readComparable } from './column-reader.ts';
import type { Comparable } from './comparable.ts';
import { canonicalToComparable } from './comparable.ts';
import type { KeyIndex } from './key-index.ts';
import { valuesKey } from './row-key.ts';
import { isLive, type TableData } from './table-data.ts';

/** One table in one generation: its rows and the indexes over them. */
export interface TableSnapshot {
  readonly schema: CompiledTable;
  readonly data: TableData;
  /** Keyed by `indexName(columns)`. */
  readonly indexes: ReadonlyMap<string, KeyIndex>;
}

export function indexName(columns: readonly number[]): string {
  return columns.join(',');
}

/**
 * An immutable, consistent state of every table. A sync flush or reload builds the next
 * generation and the instance swaps one reference; a query pins the generation it started on.
 */
export class Generation {
  readonly id: number;
  readonly schema: CompiledSchema;
  readonly tables: ReadonlyMap<string, TableSnapshot>;
  readonly createdAt: number;
  /**
   * Per table, the id of the generation its rows last changed in (this one's for a table it
   * loaded): a result over tables whose stamps did not move cannot have changed.
   */
  readonly tableStamps: ReadonlyMap<string, number>;

  constructor(
    id: number,
    schema: CompiledSchema,
    tables: ReadonlyMap<string, TableSnapshot>,
    createdAt = Date.now(),
    tableStamps?: ReadonlyMap<string, number>,
  ) {
    this.id = id;
    this.schema = schema;
    this.tables = tables;
    this.createdAt = createdAt;
    this.tableStamps = tableStamps ?? new Map([...tables.keys()].map((name) => [name, id]));
  }

  table(name: string): TableSnapshot {
    const table = this.tables.get(name);
    if (!table) throw new Error(`table ${name} is not in this generation`);
    return table;
  }

  /**
   * Whether `table` holds a row with the primary key of `row` (canonical values in stored
   * column order; only the key columns are read).
   */
  hasKey(table: string, row: readonly unknown[]): boolean {
    const snapshot = this.table(table);
    const key = snapshot.schema.primaryKey;
    const index = snapshot.indexes.get(indexName(key));
    if (key.length === 0 || !index) return false;
    const value = valuesKey(
      key.map((c) => canonicalToComparable(snapshot.schema.columns[c]!.type, row[c])),
    );
    return value !== null && index.first(value) !== undefined;
  }

  /** The largest value of a column among the table's live rows (null when it has none). */
  maxValue(table: string, column: number): Comparable | null {
    let max: Comparable | null = null;
    for (const chunk of this.table(table).data.chunks) {
      const values = chunk.columns[column];
      if (!values) continue;
      for (let offset = 0; offset < chunk.length; offset++) {
        if (!isLive(chunk, offset)) continue;
        const value = readComparable(values, offset);
        if (value !== null && (max === null || value > max)) max = value;
      }
    }
    return max;
  }

  rowCounts(): Record<string, number> {
    const counts: Record<string, number> = {};
    for (const [name, table] of this.tables) counts[name] = table.data.liveRows;
    return counts;
  }

  /** Bytes held by the stored columns and the indexes. */
  byteSize(): number {
    let bytes = 0;
    for (const table of this.tables.values()) {
      for (const chunk of table.data.chunks) {
        for (const column of chunk.columns) bytes += chunkByteSize(column);
        bytes += chunk.deleted?.byteLength ?? 0;
      }
      for (const index of table.indexes.values()) bytes += index.byteSize;
    }
    return bytes;
  }
}
