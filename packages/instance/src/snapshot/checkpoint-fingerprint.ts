import { createHash } from 'node:crypto';
import type { CompiledSchema, SchemaConfig, SourceSchema } from '@replix/engine';
import { CHECKPOINT_FORMAT } from './checkpoint-files.ts';

/**
 * What a checkpoint must have been built under to be loaded: the checkpoint format, the source
 * (its address without credentials: a connection moved to another server must not load the
 * old server's rows and position), the parts of the schema config that shape the rows served,
 * and the served tables and views as the source described them (a column added or retyped
 * changes what a generation holds). Tables the config does not serve, and settings that shape
 * no row (query limits, the memory cap a resize changes, sync timings), are left out, so
 * changing them costs no source read.
 */
export function checkpointFingerprint(
  sourceUrl: string,
  source: SourceSchema,
  schema: CompiledSchema,
): string {
  const served = new Set(schema.tables.map((table) => table.sourceName));
  const described = [...source.tables, ...(source.views ?? [])]
    .filter((table) => served.has(table.name))
    // The row estimate moves with every write; the rest describes what a generation holds.
    .map(({ estimatedRows: _, ...table }) => table);
  return createHash('sha256')
    .update(
      JSON.stringify({
        format: CHECKPOINT_FORMAT,
        source: sourceAddress(sourceUrl),
        config: rowShaping(schema.config),
        tables: described,
      }),
    )
    .digest('hex');
}

function rowShaping(config: SchemaConfig): Record<string, unknown> {
  const { tables, where, where_columns, field_aliases, sync } = config;
  return {
    tables,
    where,
    where_columns,
    field_aliases,
    mode: sync.mode,
    change: sync.change_column,
  };
}

/** The source URL without its user and password. */
function sourceAddress(sourceUrl: string): string {
  try {
    const url = new URL(sourceUrl);
    url.username = '';
    url.password = '';
    return url.toString();
  } catch {
    return '';
  }
}
