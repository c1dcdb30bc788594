import { createHash } from 'node:crypto';
import type { CompiledSchema, SourceSchema } from '@replix/engine';
import { CHECKPOINT_FORMAT } from './checkpoint-files.ts';

/**
 * What a checkpoint must have been built under to be loaded: the checkpoint format, the source
 * (its address without credentials: a connection moved to another server must not load the
 * old server's rows and position), the schema config, and the served tables and views as the
 * source described them (a column added or retyped changes what a generation holds). Tables
 * the config does not serve are left out, so changing them costs no source read.
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
        config: schema.config,
        tables: described,
      }),
    )
    .digest('hex');
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
