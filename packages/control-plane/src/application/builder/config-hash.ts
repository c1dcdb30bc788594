import { createHash } from 'node:crypto';
import type { Selectable } from 'kysely';
import type { DatabaseTable } from '../../adapters/store/schema.ts';

/** JSON text with object keys sorted, so equal configs hash equally whatever their key order. */
function canonicalJson(value: unknown): string {
  if (Array.isArray(value)) return `[${value.map(canonicalJson).join(',')}]`;
  if (value !== null && typeof value === 'object') {
    const entries = Object.entries(value as Record<string, unknown>)
      .filter(([, v]) => v !== undefined)
      .sort(([a], [b]) => (a < b ? -1 : a > b ? 1 : 0));
    return `{${entries.map(([k, v]) => `${JSON.stringify(k)}:${canonicalJson(v)}`).join(',')}}`;
  }
  return JSON.stringify(value);
}

/**
 * The hash of what a build compiles from a database: its source schema and its schema config
 * (including the config's own `sync` key). A build stores it as `config_hash`; a database whose
 * hash differs from its current build's has changes that only a rebuild applies.
 *
 * The database's sync columns (sync_mode, sync_interval, safety_net) are left out on purpose:
 * they reach the instance through its launch environment, which overrides the artifact's, so a
 * reconfigure applies them without a rebuild; `deployed_config` tracks them instead. Hashing
 * them here would leave `hasPendingChanges` true after a reconfigure that applied them.
 */
export function databaseConfigHash(database: Selectable<DatabaseTable>): string {
  return createHash('sha256')
    .update(
      canonicalJson({
        sourceSchema: database.source_schema,
        schemaConfig: database.schema_config,
      }),
    )
    .digest('hex');
}
