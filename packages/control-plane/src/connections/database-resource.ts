import type { Selectable } from 'kysely';
import { Type } from 'typebox';
import { DateTime, iso, Uuid } from '../api/common-schemas.ts';
import { DATABASE_STATUSES } from '../domain/database-status.ts';
import type { DatabaseTable } from '../store/schema.ts';

/** A database record in the API (GET/POST/PATCH /databases). */
export const Database = Type.Object(
  {
    id: Uuid,
    name: Type.String(),
    connectionId: Uuid,
    sourceSchema: Type.String({
      description:
        'The source database (MySQL), or `<database>[/<schema>]` (PostgreSQL, SQL Server).',
    }),
    schemaConfig: Type.Record(Type.String(), Type.Unknown(), {
      description: 'The schema config as given (docs/schema-config.md).',
    }),
    region: Type.String(),
    instanceSize: Type.String(),
    syncMode: Type.String(),
    syncInterval: Type.Number({ description: 'Seconds.' }),
    logLevel: Type.String(),
    safetyNet: Type.Number({ description: 'Seconds between safety-net reloads; 0 for none.' }),
    status: Type.Enum([...DATABASE_STATUSES]),
    replicationPaused: Type.Boolean(),
    currentBuildId: Type.Union([Uuid, Type.Null()]),
    lastError: Type.Union([Type.String(), Type.Null()]),
    createdAt: DateTime,
    updatedAt: DateTime,
  },
  { $id: 'Database', description: 'A schema config bound to a source connection.' },
);

/** The API view of a database row; the key secret and internal bookkeeping stay out. */
export function databaseResource(row: Selectable<DatabaseTable>) {
  return {
    id: row.id,
    name: row.name,
    connectionId: row.connection_id,
    sourceSchema: row.source_schema,
    schemaConfig: row.schema_config,
    region: row.region,
    instanceSize: row.instance_size,
    syncMode: row.sync_mode,
    syncInterval: row.sync_interval,
    logLevel: row.log_level,
    safetyNet: row.safety_net,
    status: row.status as (typeof DATABASE_STATUSES)[number],
    replicationPaused: row.replication_paused,
    currentBuildId: row.current_build_id,
    lastError: row.last_error,
    createdAt: iso(row.created_at),
    updatedAt: iso(row.updated_at),
  };
}
