import type { CompiledSchema, CompiledTable } from '../schema/compiled-schema.ts';
import { chunkByteSize } from './column-chunk.ts';
import type { KeyIndex } from './key-index.ts';
import type { TableData } from './table-data.ts';

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

  constructor(id: number, schema: CompiledSchema, tables: ReadonlyMap<string, TableSnapshot>) {
    this.id = id;
    this.schema = schema;
    this.tables = tables;
    this.createdAt = Date.now();
  }

  table(name: string): TableSnapshot {
    const table = this.tables.get(name);
    if (!table) throw new Error(`table ${name} is not in this generation`);
    return table;
  }

  rowCounts(): Record<string, number> {
    const counts: Record<string, number> = {};
    for (const [name, table] of this.tables) counts[name] = table.data.liveRows;
    return counts;
  }

  /** Bytes held by the stored columns (indexes are estimated at 24 bytes an entry). */
  byteSize(): number {
    let bytes = 0;
    for (const table of this.tables.values()) {
      for (const chunk of table.data.chunks) {
        for (const column of chunk.columns) bytes += chunkByteSize(column);
        bytes += chunk.deleted?.byteLength ?? 0;
      }
      for (const index of table.indexes.values()) bytes += index.size * 24;
    }
    return bytes;
  }
}
