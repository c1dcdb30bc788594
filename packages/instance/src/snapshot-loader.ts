import {
  type CompiledSchema,
  type CompiledTable,
  type Generation,
  GenerationBuilder,
  type SourceColumn,
} from '@replix/engine';
import type { SourceConnector } from '@replix/sources';

export interface LoadProgress {
  readonly tablesDone: number;
  readonly tablesTotal: number;
  readonly rowsLoaded: number;
}

/** The source columns an instance reads for a compiled table, in stored order. */
export function sourceColumnsOf(table: CompiledTable): SourceColumn[] {
  return table.columns.map((column) => ({
    name: column.sourceName,
    type: column.type,
    nullable: column.nullable,
    sourceType: column.sourceType,
    ...(column.scale !== undefined ? { scale: column.scale } : {}),
  }));
}

/**
 * Reads every table of `schema` from one consistent snapshot of the source, streaming rows
 * into a new generation, and reports progress after each batch.
 */
export async function loadSnapshot(
  connector: SourceConnector,
  schema: CompiledSchema,
  id: number,
  onProgress: (progress: LoadProgress) => void,
  signal?: AbortSignal,
): Promise<Generation> {
  const builder = new GenerationBuilder(schema);
  const reader = await connector.openSnapshot();
  let rowsLoaded = 0;
  try {
    let tablesDone = 0;
    for (const table of schema.tables) {
      const loader = builder.loader(table.name);
      for await (const batch of reader.readTable({
        table: table.sourceName,
        columns: sourceColumnsOf(table),
        where: table.where,
      })) {
        signal?.throwIfAborted();
        loader.appendRows(batch);
        rowsLoaded += batch.length;
        onProgress({ tablesDone, tablesTotal: schema.tables.length, rowsLoaded });
      }
      tablesDone += 1;
      onProgress({ tablesDone, tablesTotal: schema.tables.length, rowsLoaded });
    }
  } finally {
    await reader.close();
  }
  return builder.finish(id);
}
