import {
  type CompiledSchema,
  type CompiledTable,
  type Generation,
  GenerationBuilder,
  type SourceColumn,
} from '@replix/engine';
import type { ReplicationPosition, SourceConnector } from '@replix/sources';

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
    ...(column.elementType !== undefined ? { elementType: column.elementType } : {}),
  }));
}

export interface LoadedSnapshot {
  readonly generation: Generation;
  /** Where change data capture resumes to follow this snapshot (null without `withPosition`). */
  readonly position: ReplicationPosition | null;
}

/**
 * Reads every table of `schema` from one consistent snapshot of the source, streaming rows
 * into a new generation, and reports progress after each batch. With `withPosition` it also
 * captures the change-history position the snapshot corresponds to.
 */
export async function loadSnapshot(
  connector: SourceConnector,
  schema: CompiledSchema,
  id: number,
  onProgress: (progress: LoadProgress) => void,
  options: { withPosition?: boolean; signal?: AbortSignal } = {},
): Promise<LoadedSnapshot> {
  const builder = new GenerationBuilder(schema);
  const reader = await connector.openSnapshot({
    withPosition: options.withPosition ?? false,
    // A view has no change stream to follow (PostgreSQL cannot publish one): base tables only.
    tables: schema.tables.filter((table) => table.kind === 'table').map((t) => t.sourceName),
  });
  const position = reader.position;
  const signal = options.signal;
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
  return { generation: builder.finish(id), position };
}
