import type { CompiledTable } from '../schema/compiled-schema.ts';
import { ColumnBuilder } from './column-builder.ts';
import { indexName } from './generation.ts';
import type { IndexSpec } from './index-plan.ts';
import { KeyIndex } from './key-index.ts';
import { rowKey } from './row-key.ts';
import { CHUNK_BITS, CHUNK_ROWS, type Chunk, isLive, type TableData } from './table-data.ts';

/**
 * Builds a table's chunks from rows streamed in batches (each row an array of canonical values
 * in stored column order), a chunk at a time, so memory holds one batch beyond the result.
 */
export class TableLoader {
  readonly #table: CompiledTable;
  readonly #chunks: Chunk[] = [];
  readonly #chunkRows: number;
  #builders: ColumnBuilder[];
  #rows = 0;

  constructor(table: CompiledTable, chunkRows = CHUNK_ROWS) {
    this.#table = table;
    this.#chunkRows = Math.min(chunkRows, CHUNK_ROWS);
    this.#builders = this.#newBuilders();
  }

  #newBuilders(): ColumnBuilder[] {
    return this.#table.columns.map((column) => new ColumnBuilder(column.type, column.scale));
  }

  get rows(): number {
    return this.#rows;
  }

  appendRows(rows: readonly (readonly unknown[])[]): void {
    let start = 0;
    while (start < rows.length) {
      const filled = this.#builders[0]?.length ?? 0;
      const take = Math.min(rows.length - start, this.#chunkRows - filled);
      // Column at a time: one builder's state stays hot in cache across the batch.
      for (let c = 0; c < this.#builders.length; c++)
        (this.#builders[c] as ColumnBuilder).appendColumn(rows, c, start, start + take);
      start += take;
      this.#rows += take;
      if (filled + take === this.#chunkRows) this.#seal();
    }
  }

  #seal(): void {
    const length = this.#builders[0]?.length ?? 0;
    if (length === 0) return;
    this.#chunks.push({
      length,
      columns: this.#builders.map((builder) => builder.finish()),
      deleted: null,
      deletedCount: 0,
    });
    this.#builders = this.#newBuilders();
  }

  finish(): TableData {
    this.#seal();
    return { chunks: this.#chunks, liveRows: this.#rows };
  }
}

/** Builds the indexes of `specs` over every live row of `data`. */
export function buildIndexes(data: TableData, specs: readonly IndexSpec[]): Map<string, KeyIndex> {
  const indexes = new Map<string, KeyIndex>();
  for (const spec of specs) {
    const index = KeyIndex.build(spec.columns, spec.unique, (add) => {
      data.chunks.forEach((chunk, c) => {
        const base = c << CHUNK_BITS;
        for (let offset = 0; offset < chunk.length; offset++) {
          if (!isLive(chunk, offset)) continue;
          const key = rowKey(chunk.columns, spec.columns, offset);
          if (key !== null) add(key, base + offset);
        }
      });
    });
    indexes.set(indexName(spec.columns), index);
  }
  return indexes;
}
